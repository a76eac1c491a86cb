import Foundation
import RouteSync
import Synchronization
import Testing
import TestOrigin

/// Two publishers of one channel that overlap (issue 53): a second publish started while the first
/// is held at each step of the upload plan waits for it and then builds on its release, so the
/// channel's head never goes back; and a publish killed after writing files at their uris leaves a
/// layout that the next publish puts right. To a folder and to the three-replica object store.
@Suite(.serialized, .awaitsCleanups) struct PublishRaceTests {
    /// The steps a publisher can be held at (`CENARIUS_TEST_PAUSE_BEFORE`): after taking the lock, then
    /// before each phase of the upload plan (`PlanRunner.Phase`).
    static let steps = ["locked", "store", "layout", "removals", "last"]

    /// A `cenariusd` run on a thread of its own, for a test that does something else meanwhile.
    final class Background: Sendable {
        private let result = Mutex<Binary.Run?>(nil)

        /// On a thread of its own, started now: on the shared queue, whose threads the suite's other
        /// waits may all hold, B once started only after A had been let go and had finished (CI,
        /// 2026-11-28: no wait, nothing restaged), and the overlap it tests never happened.
        init(_ arguments: [String], environment: [String: String]) {
            Thread { [self] in
                let run = (try? Binary.run(arguments, environment: environment, killAfter: 240)) ?? Binary.Run(status: -2, stdout: "", stderr: "did not start")
                self.result.withLock { $0 = run }
            }.start()
        }

        var finished: Binary.Run? { result.withLock { $0 } }

        func wait() throws -> Binary.Run {
            try poll("the background publish ended", timeout: 240) { finished }
        }
    }

    /// The head's version at `publisher`'s remote, as a device's poll reads it.
    static func headVersion(_ publisher: PublishTests.Publisher) throws -> Int64? {
        let releases = try publisher.releases()
        return (releases.first { $0["current"] as? Bool == true }?["version"] as? NSNumber)?.int64Value
    }

    /// Publisher A (release `a`) held at `step`; publisher B (release `b`) started meanwhile must
    /// wait, and once A goes on both finish, B's release on top. The head read at every point never
    /// goes back, and a device ends on B's release. B staged its release on what the remote held
    /// before A's landed, so it stages it again under the lock (`restaged`); A, whose remote nobody
    /// changed, uploads the release it staged while it took the lock.
    static func overlap(_ publisher: PublishTests.Publisher, at step: String, a: Int, b: Int) throws {
        let before = try headVersion(publisher) ?? 0
        let (first, hold) = try held(publisher, at: step, release: a)
        let second = Background(["publish", try publisher.build(b), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key"),
                                 "--release", "r\(b)", "--json"] + publisher.remoteFlags, environment: publisher.environment)
        // B has every chance to finish on its own: it must not while A holds the destination.
        Thread.sleep(forTimeInterval: 3)
        #expect(second.finished == nil, "at \(step): B finished while A was held: \(second.finished?.stderr ?? "")")
        let during = try headVersion(publisher) ?? 0
        #expect(during >= before, "at \(step): the head went back while A was held")
        try FileManager.default.removeItem(atPath: hold)
        let (ranA, ranB) = (try first.wait(), try second.wait())
        #expect(ranA.status == 0, "at \(step): A: \(ranA.stderr)")
        #expect(ranB.status == 0, "at \(step): B: \(ranB.stderr)")
        #expect(ranB.stderr.contains("waiting for the publish of pid"), "at \(step): B says whom it waits for: \(ranB.stderr)")
        let versionA = (try? ranA.json()["version"] as? NSNumber)?.int64Value ?? 0
        let versionB = (try? ranB.json()["version"] as? NSNumber)?.int64Value ?? 0
        #expect(versionB > versionA && versionA > before, "at \(step): A \(versionA), then B \(versionB) on top of it, after \(before)")
        #expect((try? ranA.json()["restaged"] as? Bool) == false, "at \(step): A's remote did not change: \(ranA.stdout)")
        #expect((try? ranB.json()["restaged"] as? Bool) == true, "at \(step): B's remote changed under it: \(ranB.stdout)")
        #expect(try headVersion(publisher) == versionB, "at \(step): the head is B's, the newest")
        #expect(try publisher.sync("after the overlap at \(step)")["outcome"] as? String != nil)
        #expect(try publisher.served() == "<h1>release \(b)</h1>", "at \(step)")
        let verified = try Device("device", in: publisher.dir).run(["verify"])
        #expect(verified.status == 0, "at \(step): the device's cache after B's restaged release: \(verified.stdout) \(verified.stderr)")
    }

    /// A publish of release `n` held at `step` (`CENARIUS_TEST_PAUSE_BEFORE`) until the file it
    /// returns is removed; returns once the publisher is there.
    static func held(_ publisher: PublishTests.Publisher, at step: String, release n: Int, environment extra: [String: String] = [:]) throws -> (Background, String) {
        let hold = publisher.dir.path("hold-\(step)")
        _ = FileManager.default.createFile(atPath: hold, contents: nil)
        var environment = publisher.environment.merging(extra) { $1 }
        environment["CENARIUS_TEST_PAUSE_BEFORE"] = step
        environment["CENARIUS_TEST_PAUSE_FILE"] = hold
        let run = Background(["publish", try publisher.build(n), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key"),
                              "--release", "r\(n)", "--json"] + publisher.remoteFlags, environment: environment)
        try waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: hold + ".reached") || run.finished != nil }
        #expect(run.finished == nil, "release \(n) never reached \(step): \(run.finished?.stderr ?? "")")
        return (run, hold)
    }

    /// Every file at its uri holds the bytes the served `Routes.json` lists (a Cenarius client's view).
    static func layoutAgrees(_ root: String) throws -> [String] {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/Routes.json")))
        let table = try RouteTable.parse(bytes, source: root)
        return try table.entries.compactMap { entry in
            let (hash, _) = try FileSystem.hashFile(root + "/" + entry.uri.value, algorithm: entry.hash.algorithm)
            return hash == entry.hash ? nil : entry.uri.value
        }
    }

    @Test func overlappingPublishesToAFolderNeverMoveTheHeadBack() throws {
        let origin = try TLSOrigin()
        let publisher = try PublishTests.Publisher(remote: origin.folder("site"), publicURL: origin.url(.good), deviceFlags: ["--cacert", origin.caFile])
        try publisher.publish(1)
        #expect(try publisher.sync("release 1")["outcome"] as? String == "committed")
        for (n, step) in Self.steps.enumerated() {
            try Self.overlap(publisher, at: step, a: 2 * n + 2, b: 2 * n + 3)
            #expect(try Self.layoutAgrees(publisher.remote) == [], "at \(step): files at their uris disagree with Routes.json")
        }
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func overlappingPublishesToTheObjectStoreNeverMoveTheHeadBack() async throws {
        let (_, _, publisher) = try await PublishTests.Publisher.onObjectStore("race")
        #expect(try publisher.publish(1)["restaged"] as? Bool == false, "alone, the release staged while the lease settled is uploaded")
        #expect(try publisher.sync("release 1")["outcome"] as? String == "committed")
        for (n, step) in Self.steps.enumerated() {
            try Self.overlap(publisher, at: step, a: 2 * n + 2, b: 2 * n + 3)
        }
        // The lease is gone once both ended: a third publish takes the lock at once.
        let third = try publisher.run(["publish", try publisher.build(20), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key")]
            + publisher.remoteFlags)
        #expect(third.status == 0 && !third.stderr.contains("waiting"), "\(third.stderr)")
    }

    /// Publishes release `n`, holds it before its last phase (after the files at their uris) and
    /// SIGKILLs it there, by the pid its lock names.
    static func killBeforeTheHead(_ publisher: PublishTests.Publisher, release n: Int) throws {
        let hold = publisher.dir.path("hold-\(n)")
        _ = FileManager.default.createFile(atPath: hold, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: hold) }
        var environment = publisher.environment
        environment["CENARIUS_TEST_PAUSE_BEFORE"] = "last"
        environment["CENARIUS_TEST_PAUSE_FILE"] = hold
        let killed = Background(["publish", try publisher.build(n), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key")],
                                environment: environment)
        try waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: hold + ".reached") }
        try FileManager.default.removeItem(atPath: hold + ".reached")
        let pid = try #require(try String(contentsOfFile: publisher.remote + "/" + ".cenarius-publish.lock", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("pid ") }.flatMap { Int32($0.dropFirst(4)) })
        kill(pid, SIGKILL)
        #expect(try killed.wait().status != 0)
    }

    /// A publish killed after it wrote files at their uris, before `Routes.json` and the head: the
    /// head's own build published again is not "already there", and it and a later release leave
    /// every file at its uri as the table says.
    @Test func aPublishKilledAfterTheLayoutIsPutRightByTheNext() throws {
        let origin = try TLSOrigin()
        let publisher = try PublishTests.Publisher(remote: origin.folder("site"), publicURL: origin.url(.good), deviceFlags: ["--cacert", origin.caFile])
        try publisher.publish(1)
        try Self.killBeforeTheHead(publisher, release: 2)
        #expect(try Self.layoutAgrees(publisher.remote) != [], "the killed publish left release 2's files at their uris")

        let again = try publisher.publish(1, expectUploads: false)
        #expect(again["unchanged"] as? Bool == false && (again["uploaded"] as? Int ?? 0) > 0, "the head's build again repairs the layout: \(again)")
        #expect(try Self.layoutAgrees(publisher.remote) == [])
        #expect(try publisher.publish(1, expectUploads: false)["unchanged"] as? Bool == true, "then it is there")

        // The same, then a fix published over it: no file is skipped for a hash the old table listed.
        try Self.killBeforeTheHead(publisher, release: 2)
        try publisher.publish(3)
        #expect(try Self.layoutAgrees(publisher.remote) == [])
        #expect(try publisher.sync("release 3")["outcome"] as? String == "committed")
        #expect(try publisher.served() == "<h1>release 3</h1>")
    }
}
