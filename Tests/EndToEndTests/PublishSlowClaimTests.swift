import Foundation
import Testing
import TestOrigin

/// A slow claim on a store without conditional writes (OpenStack Swift): publisher A reads that no
/// lease is live and writes its own only once B has taken the lock and is uploading. A's
/// read-then-write took longer than the settle's bound, so A waits out a renewal of the holder it
/// may have overwritten before it reads its lease back; B finds its lease gone at that renewal,
/// stops before its layout and head, waits for A and publishes on top of it. One writer at a time,
/// and the head never goes back.
@Suite(.serialized, .awaitsCleanups) struct PublishSlowClaimTests {
    typealias Background = PublishRaceTests.Background

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aSlowClaimWaitsOutTheHolderItOverwrote() async throws {
        let (_, _, publisher) = try await PublishTests.Publisher.onObjectStore("slow")
        try publisher.publish(1)
        let before = try #require(try PublishRaceTests.headVersion(publisher))
        let (a, holdA) = try PublishRaceTests.held(publisher, at: "lease-write", release: 2)
        let (b, holdB) = try PublishRaceTests.held(publisher, at: "layout", release: 3)
        // B holds the lock and has written its store objects; A, whose read came a second and more
        // before (past `claimBound`, whatever B's settle was), now writes its lease over B's.
        try await Task.sleep(for: .seconds(1))
        let resumed = Date()
        try FileManager.default.removeItem(atPath: holdA)
        try waitUntil(timeout: 45) { a.finished != nil }
        let aSeconds = Date().timeIntervalSince(resumed)
        try FileManager.default.removeItem(atPath: holdB)
        let (ranA, ranB) = (try a.wait(), try b.wait())
        // A waited at least one renewal period (10 s) before it went on: without that wait it would
        // have read its lease back after the 1 s settle and uploaded beside B.
        #expect(aSeconds >= 10, "A went on after \(aSeconds) s")
        #expect(ranA.status == 0, "A: \(ranA.stderr)")
        let versionA = try #require((try? ranA.json()["version"] as? NSNumber)?.int64Value, "\(ranA.stdout)")
        #expect(versionA > before)
        var versionB: Int64 = 0
        if ranB.status == 0 {
            // B renewed its lease right before A's write landed, so A read B's back and waited for B to
            // end; or B found its lease gone, stopped before its layout, waited for A and published on top.
            versionB = (try? ranB.json()["version"] as? NSNumber)?.int64Value ?? 0
            #expect(versionB > before && versionB != versionA, "B \(versionB), A \(versionA)")
            if versionB > versionA { #expect(ranB.stderr.contains("took this one's lock") && ranB.stderr.contains("publishing again"), "B: \(ranB.stderr)") }
        } else {
            #expect(ranB.stderr.contains("took this one's lock") || ranB.stderr.contains("changed while this publish ran"), "B: \(ranB.stderr)")
        }
        try Self.deviceTakes(release: versionB > versionA ? 3 : 2, head: max(versionA, versionB), from: publisher, "after the slow claim")
    }

    /// The head is the last writer's (`version`), and a device takes release `n` through it, verified.
    static func deviceTakes(release n: Int, head version: Int64, from publisher: PublishTests.Publisher, _ what: String) throws {
        #expect(try PublishRaceTests.headVersion(publisher) == version, "the head is the last writer's")
        #expect(try publisher.sync(what)["outcome"] as? String == "committed")
        #expect(try publisher.served() == "<h1>release \(n)</h1>")
        try verified(publisher, "device")
    }

    /// The token of the lease in `publisher`'s store now, read anonymously as a device reads a key.
    static func leaseToken(_ publisher: PublishTests.Publisher) -> String? {
        guard let url = URL(string: publisher.publicURL + "/.cenarius-publish.lock"), let port = url.port,
              let reply = try? RawHTTP(port: port).get(url.path), reply.status == 200 else { return nil }
        return reply.text.split(separator: "\n").first { $0.hasPrefix("token ") }.map(String.init)
    }

    static func verified(_ publisher: PublishTests.Publisher, _ device: String) throws {
        let verified = try Device(device, in: publisher.dir).run(["verify"])
        #expect(verified.status == 0, "\(device): \(verified.stdout) \(verified.stderr)")
    }

    /// The holder reads its lease again before its layout (the settle is as short as a quarter
    /// second on a fast store): B read that no lease was live before A wrote its own, and writes its
    /// lease over A's while A, holding the lock, is between its store objects and its layout. A
    /// stops there, before any file at its uri or the head, waits for B (whose claim was slow, so it
    /// waits out a renewal, holds the lock and publishes), then publishes on top of B's release.
    /// Without A's look, both would write a layout at once.
    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aHolderWhoseLeaseWasOverwrittenStopsBeforeItsLayoutAndWaits() async throws {
        let (_, _, publisher) = try await PublishTests.Publisher.onObjectStore("overwritten")
        try publisher.publish(1)
        let before = try #require(try PublishRaceTests.headVersion(publisher))
        let (b, holdB) = try PublishRaceTests.held(publisher, at: "lease-write", release: 3)
        let (a, holdA) = try PublishRaceTests.held(publisher, at: "layout", release: 2)
        try FileManager.default.removeItem(atPath: holdB)
        // B's lease lands over A's within a request; A then goes on to its layout.
        try await Task.sleep(for: .seconds(1))
        try FileManager.default.removeItem(atPath: holdA)
        let (ranA, ranB) = (try a.wait(), try b.wait())
        #expect(ranB.status == 0, "B: \(ranB.stderr)")
        #expect(ranA.status == 0, "A: \(ranA.stderr)")
        #expect(ranA.stderr.contains("took this one's lock") && ranA.stderr.contains("publishing again"), "A: \(ranA.stderr)")
        let versionB = try #require((try? ranB.json()["version"] as? NSNumber)?.int64Value, "\(ranB.stdout)")
        let versionA = try #require((try? ranA.json()["version"] as? NSNumber)?.int64Value, "\(ranA.stdout)")
        #expect(versionA > versionB && versionB > before, "B \(versionB), then A \(versionA) on top of it")
        try Self.deviceTakes(release: 2, head: versionA, from: publisher, "after the overwritten lease")
    }

    /// Store objects written in the settle of a claim that loses count for nothing: publisher A
    /// claims the lock, and while its lease settles a prune that had read no lease before A wrote
    /// one overwrites it (a slow claim, which then waits a renewal period; or, on a loaded machine,
    /// a claim that raced A's and won), lists the store once it holds the lock, and deletes the
    /// store objects A wrote in its settle, which nothing names.
    /// A waits for the prune, claims again and uploads the release it staged (the remote holds
    /// what it was staged on), writing those objects again: its head names nothing missing.
    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func storeObjectsWrittenInALostClaimsSettleAreWrittenAgain() async throws {
        let (_, _, publisher) = try await PublishTests.Publisher.onObjectStore("settle")
        try publisher.publish(1)
        #expect(try publisher.sync("release 1")["outcome"] as? String == "committed")
        let hold = publisher.dir.path("hold-prune")
        _ = FileManager.default.createFile(atPath: hold, contents: nil)
        var environment = publisher.environment
        environment["CENARIUS_TEST_PAUSE_BEFORE"] = "lease-write"
        environment["CENARIUS_TEST_PAUSE_FILE"] = hold
        let prune = Background(["prune", publisher.remote, "--keep", "10", "--min-age", "0", "--json"] + publisher.remoteFlags, environment: environment)
        try waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: hold + ".reached") || prune.finished != nil }
        // A's lease is written and settling while its store objects go up; the prune, which read
        // no lease before A wrote one, now writes its own over A's; A then reads its lease back.
        let (a, holdA) = try PublishRaceTests.held(publisher, at: "lease-settle", release: 2, environment: ["CENARIUS_TEST_TRACE": "1"])
        // A stages and writes its store objects meanwhile; then the prune's lease lands over A's. Its
        // claim took seconds (a slow claim), so it waits a renewal period before it reads it back and
        // lists the store; A, let go, reads its own lease back first and finds the prune's.
        try await Task.sleep(for: .seconds(2))
        let leaseA = try #require(Self.leaseToken(publisher), "A's lease is written")
        try FileManager.default.removeItem(atPath: hold)
        // A reads its lease back only once the prune's is there (a request; seconds on a loaded machine).
        try waitUntil(timeout: 30) { Self.leaseToken(publisher).map { $0 != leaseA } ?? false }
        try FileManager.default.removeItem(atPath: holdA)
        let (pruned, ranA) = (try prune.wait(), try a.wait())
        #expect(pruned.status == 0, "prune: \(pruned.stderr)")
        let deleted = (try? pruned.json()["deleted"] as? [String]) ?? []
        // A writes its store objects in the settle only when its staging ends after its claim (on a
        // loaded machine the staging may end first, and they wait for the store phase under the lock).
        if ranA.stderr.contains("early-stored") {
            #expect(!deleted.isEmpty, "the prune held the lock while A's objects were unnamed: \(pruned.stdout) \(pruned.stderr) A: \(ranA.stdout) \(ranA.stderr)")
        }
        #expect(ranA.status == 0, "A: \(ranA.stderr)")
        #expect(ranA.stderr.contains("waiting for"), "A lost its first claim and waited for the prune: \(ranA.stderr)")
        #expect((try? ranA.json()["restaged"] as? Bool) == false, "nothing A's release was staged on changed: \(ranA.stdout)")
        #expect(try publisher.sync("release 2")["outcome"] as? String == "committed")
        #expect(try publisher.served() == "<h1>release 2</h1>")
        let fresh = try publisher.sync("a first install of release 2", device: "fresh")
        #expect(fresh["outcome"] as? String == "committed")
        for device in ["device", "fresh"] { try Self.verified(publisher, device) }
    }
}
