import Foundation
@testable import Publishing
import RouteSync
import Testing

/// The order a release is uploaded in (`UploadPlan`), alone: store objects the remote lacks, then the
/// record and the Cenarius layout's changed files, then the sidecars, `Routes.json` and the head last;
/// and what it skips — only what is checked to be there.
struct UploadPlanTests {
    /// A staged release (what `routes --out-dir` writes) and the build it describes, in a temporary folder.
    struct Staged {
        let root: String
        var staging: String { root + "/staging" }
        var build: String { root + "/build" }
        let table: RouteTable
        let record: ReleaseRecord

        init(channel: String = "default", sidecars: [String] = ["Routes.json.sig"]) throws {
            root = NSTemporaryDirectory() + "upload-plan-" + UUID().uuidString
            var entries: [RouteEntry] = []
            for (uri, text) in [("index.html", "<h1>two</h1>"), ("js/app.js", "app()"), ("static/logo.txt", "logo")] {
                try Self.write(root + "/build/" + uri, text)
                entries.append(RouteEntry(uri: try URIPath(validating: uri), hash: StreamingHasher.hash(Array(text.utf8), .md5), size: Int64(text.utf8.count)))
            }
            table = try RouteTable(entries: entries)
            let headName = ReleaseHead.name(routesName: "Routes.json", channel: channel)
            try Self.write(root + "/staging/" + headName, "{}")
            try Self.write(root + "/staging/Routes.json", String(decoding: table.serialized(), as: UTF8.self))
            for sidecar in sidecars { try Self.write(root + "/staging/" + sidecar, "sig") }
            try Self.write(root + "/staging/_cenarius/z/aaaa.zst", "form")
            try Self.write(root + "/staging/_cenarius/t/bbbb.json", "table")
            let head = ReleaseHead(channel: channel, version: 7, table: ReleaseIndex.tableDigest(table.serialized()), tableSize: 10)
            record = try ReleaseRecord(head: head.serialized(), published: 1_795_000_000, origin: "publish", files: 3, bytes: 21)
        }

        static func write(_ path: String, _ text: String) throws {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }

        func remote(_ objects: [String: StoredObject] = [:], channel: String = "default", matching: Set<String>? = nil) -> RemoteState {
            var state = RemoteState(objects: objects, channel: channel, routesName: "Routes.json", records: [])
            state.layoutMatching = matching
            return state
        }

        func plan(_ remote: RemoteState) throws -> UploadPlan {
            try UploadPlan(staging: staging, build: build, table: table, record: record, remote: remote, pointerMaxAge: 60)
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    static let object = StoredObject(size: 4, modified: 1)

    @Test func storeObjectsFirstThenTheLayoutThenThePointersWithTheHeadLast() throws {
        let s = try Staged()
        defer { s.remove() }
        let plan = try s.plan(s.remote())
        #expect(Set(plan.store.map(\.key)) == ["_cenarius/z/aaaa.zst", "_cenarius/t/bbbb.json"])
        #expect(plan.layout.first?.key == s.record.key, "the record before the files at their uris")
        #expect(Set(plan.layout.dropFirst().map(\.key)) == ["index.html", "js/app.js", "static/logo.txt"])
        #expect(plan.last.map(\.key) == ["Routes.json.sig", "Routes.json", "Routes.head"], "the table after its sidecars, the head last")
        #expect(plan.uploads.map(\.key) == plan.store.map(\.key) + plan.layout.map(\.key) + plan.last.map(\.key))
        #expect(plan.store.allSatisfy { $0.cacheControl == "public, max-age=31536000, immutable" })
        #expect(plan.last.allSatisfy { $0.cacheControl == "public, max-age=60, must-revalidate" })
    }

    @Test func whatTheStoreHoldsIsSkippedAndAFileAtItsUriOnlyWhenItsBytesWereChecked() throws {
        let s = try Staged()
        defer { s.remove() }
        var objects = ["_cenarius/z/aaaa.zst": Self.object, "index.html": StoredObject(size: 12, modified: 1, etag: "x"),
                       "js/app.js": StoredObject(size: 5, modified: 1)]
        objects[s.record.key] = Self.object
        // The listing shows files at their uris, but nothing checked their bytes (a failed publish may have left others).
        let unchecked = try s.plan(s.remote(objects))
        #expect(unchecked.store.map(\.key) == ["_cenarius/t/bbbb.json"] && unchecked.skipped == 1)
        #expect(Set(unchecked.layout.map(\.key)) == ["index.html", "js/app.js", "static/logo.txt"], "the record is there; every file goes up")
        let checked = try s.plan(s.remote(objects, matching: ["index.html"]))
        #expect(Set(checked.layout.map(\.key)) == ["js/app.js", "static/logo.txt"] && checked.skipped == 2)
        // A uri checked but absent from the listing is not taken as there either.
        let absent = try s.plan(s.remote([:], matching: ["static/logo.txt"]))
        #expect(absent.layout.contains { $0.key == "static/logo.txt" })
    }

    @Test func aSidecarTheNewReleaseLacksAndAnEarlierCompressedTableAreRemoved() throws {
        let s = try Staged(sidecars: [])
        defer { s.remove() }
        let plan = try s.plan(s.remote(["Routes.json.sig": Self.object, "Routes.json.release": Self.object,
                                        ReleaseIndex.tablePath("Routes.json"): Self.object]))
        #expect(Set(plan.removals) == ["Routes.json.sig", "Routes.json.release", ReleaseIndex.tablePath("Routes.json")])
        #expect(plan.last.map(\.key) == ["Routes.json", "Routes.head"])
    }

    @Test func anotherChannelWritesItsHeadAloneAndNoLayout() throws {
        let s = try Staged(channel: "beta", sidecars: [])
        defer { s.remove() }
        let plan = try s.plan(s.remote(channel: "beta"))
        #expect(plan.layout.map(\.key) == [s.record.key], "the record, and no file at its uri")
        #expect(plan.last.map(\.key) == ["Routes.beta.head"] && plan.removals.isEmpty)
    }

    @Test func aStagedReleaseWithoutItsHeadIsRefused() throws {
        let s = try Staged()
        defer { s.remove() }
        try FileManager.default.removeItem(atPath: s.staging + "/Routes.head")
        #expect(throws: CenariusError.self) { _ = try s.plan(s.remote()) }
    }

    /// A lock held by nobody else (the guard's head check is what is tested).
    struct Held: PublishLock {
        func renew() throws(CenariusError) {}
        func release() {}
    }

    @Test func aRunStopsBeforeTheLayoutWhenTheHeadIsNoLongerTheOneItWasStagedOn() throws {
        let s = try Staged()
        defer { s.remove() }
        let destination = FolderDestination(root: s.root + "/remote")
        try Staged.write(s.root + "/remote/Routes.head", "another publisher's head")
        let plan = try s.plan(s.remote())
        let check = PlanRunner.Guard(lock: Held(), headKey: "Routes.head", head: Array("the head it read".utf8))
        #expect(throws: CenariusError.self) { try PlanRunner.run(plan, to: destination, guard: check) { _ in } }
        #expect(FileManager.default.fileExists(atPath: s.root + "/remote/_cenarius/z/aaaa.zst"), "store objects harm no one")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/remote/index.html"), "no file at its uri")
        #expect(try String(contentsOfFile: s.root + "/remote/Routes.head", encoding: .utf8) == "another publisher's head")
        // With the head it read still there, the whole plan is written, the head last.
        let same = PlanRunner.Guard(lock: Held(), headKey: "Routes.head", head: Array("another publisher's head".utf8))
        try PlanRunner.run(plan, to: destination, guard: same) { _ in }
        #expect(try String(contentsOfFile: s.root + "/remote/Routes.head", encoding: .utf8) == "{}")
    }
}
