import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import TestOrigin

/// The release state is one file, `release.json`, under one lock: the machine's fields and the
/// records beside them (the table held back, the releases given up, the holds). Its bytes, a
/// cache from before (the records in files of their own), a rollback that writes all of it in one
/// write, and the daemon's save, which keeps what others recorded since it loaded.
@Suite(.awaitsCleanups) struct ReleaseStoreTests {
    static let golden = """
        {
          "confirmed" : 3,
          "failed" : [
            4
          ],
          "failedReleases" : [
            "2026.11-b"
          ],
          "heldBack" : "\(String(repeating: "ab", count: 32))",
          "holds" : [
            {
              "createdAt" : 1795000000,
              "expires" : 1795000060,
              "id" : "00ff",
              "reason" : "payment"
            }
          ],
          "lastRollback" : {
            "at" : 1795000010,
            "from" : 4,
            "reason" : "timeout",
            "to" : 3
          },
          "unproven" : [

          ]
        }
        """

    static let state = ReleaseState(confirmed: 3, lastRollback: .init(from: 4, to: 3, reason: .timeout, at: 1_795_000_010), failed: [4],
                                     heldBack: String(repeating: "ab", count: 32), failedReleases: ["2026.11-b"],
                                     holds: [Hold(id: "00ff", reason: "payment", createdAt: 1_795_000_000, expires: 1_795_000_060)])

    /// A cache folder of its own, removed when the test ends.
    func cache() throws -> CacheLayout {
        let root = NSTemporaryDirectory() + "cenarius-release-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root + "/cache", withIntermediateDirectories: true)
        Cleanups.add { try? FileManager.default.removeItem(atPath: root) }
        return CacheLayout(root: root + "/cache")
    }

    func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func theStateIsWrittenAsTheGoldenBytesAndReadBack() throws {
        let layout = try cache()
        try ReleaseStore(layout: layout).update { $0 = Self.state }
        #expect(try String(contentsOfFile: layout.releaseState, encoding: .utf8) == Self.golden)
        #expect(ReleaseStore(layout: layout).read() == Self.state)
        // A file written before the records were part of it reads with none.
        try write(#"{"confirmed": 3, "unproven": [], "failed": []}"#, to: layout.releaseState)
        let old = ReleaseStore(layout: layout).read()
        #expect(old.confirmed == 3 && old.heldBack == nil && old.failedReleases.isEmpty && old.holds.isEmpty)
    }

    /// A cache written by a version that kept `held-back`, `failed-releases` and `holds.json` apart:
    /// they are read as part of the state, and folded into `release.json` at its next write.
    @Test func theRecordsOfAnEarlierVersionAreReadAndFoldedInAtTheNextWrite() throws {
        let layout = try cache()
        let held = String(repeating: "cd", count: 32)
        try write(held, to: layout.heldBack)
        try write(#"["r2", "r1"]"# + "\n", to: layout.failedReleases)
        try write(#"[{"id": "aa", "reason": "kiosk", "createdAt": 100, "expires": 4000000000}]"#, to: layout.holds)
        let read = ReleaseStore(layout: layout).read()
        #expect(read.heldBack == held && read.failedReleases == ["r2", "r1"] && read.holds.map(\.id) == ["aa"])
        #expect(HoldStore(layout: layout).active().map(\.id) == ["aa"] && FailedReleases(layout: layout).names == ["r2", "r1"])

        FailedReleases(layout: layout).record("r3")
        for path in [layout.heldBack, layout.failedReleases, layout.holds] {
            #expect(!FileManager.default.fileExists(atPath: path), "\(path) folded into release.json")
        }
        let folded = ReleaseStore(layout: layout).read()
        #expect(folded.heldBack == held && folded.failedReleases == ["r3", "r2", "r1"] && folded.holds.map(\.id) == ["aa"])
    }

    /// The daemon writes its machine's fields over what it loaded; a hold or a refused release
    /// recorded since by someone else stays.
    @Test func theMachinesSaveKeepsTheRecordsOthersWroteSinceItLoaded() throws {
        let layout = try cache()
        let store = ReleaseStore(layout: layout)
        var machine = store.read()
        let hold = try HoldStore(layout: layout).add(ttl: 60, reason: "payment")
        FailedReleases(layout: layout).record("2026.11-b")
        machine.markConfirmed(7)
        try store.update { $0.takeMachine(machine) }
        let saved = store.read()
        #expect(saved.confirmed == 7 && saved.holds == [hold] && saved.failedReleases == ["2026.11-b"])
    }

    /// An operator's rollback writes the release it leaves (held back, given up) with the machine's
    /// record of it, in the one file; the next commit of another release clears the table held back.
    @Test func aRollbackRecordsEverythingInOneFileAndTheNextReleaseClearsTheHeldBackTable() async throws {
        let f = try await Fixture.registered()
        let layout = f.settings.cache
        try f.release(["index.html": "v1"])
        try f.release(["index.html": "v2"])
        let left = try FileSystem.readFile(GenerationStore(layout: layout).current()!.tablePath)
        let result = try LocalRelease.rollback(settings: f.settings)
        #expect(result.from == 2 && result.to == 1)
        let state = ReleaseStore(layout: layout).read()
        #expect(state.heldBack == ReleaseIndex.tableDigest(left) && state.lastRollback?.from == 2)
        #expect(state.failedReleases.count == 1 && FailedReleases(layout: layout).names == state.failedReleases)
        for name in ["held-back", "failed-releases", "holds.json"] { #expect(!FileManager.default.fileExists(atPath: layout.root + "/" + name)) }
        #expect(try f.sync().outcome == .heldBack, "the remote still offers the release left")

        try f.release(["index.html": "v3"])
        #expect(ReleaseStore(layout: layout).read().heldBack == nil, "another release is current")
        #expect(ReleaseStore(layout: layout).read().failedReleases == state.failedReleases, "what was given up is still reported")
    }
}
