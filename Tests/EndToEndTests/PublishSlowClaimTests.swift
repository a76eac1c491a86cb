import Foundation
import Testing
import TestOrigin

/// A slow claim on a store without conditional writes (OpenStack Swift): publisher A reads that no
/// lease is live and writes its own only once B has taken the lock and is uploading. A's
/// read-then-write took longer than the settle's bound, so A waits out a renewal of the holder it
/// may have overwritten before it reads its lease back; B finds its lease gone at that renewal and
/// stops before its layout and head. One writer at a time, and the head never goes back.
@Suite(.serialized, .awaitsCleanups) struct PublishSlowClaimTests {
    typealias Background = PublishRaceTests.Background

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aSlowClaimWaitsOutTheHolderItOverwrote() async throws {
        let (_, _, publisher) = try await PublishTests.Publisher.onObjectStore("slow")
        try publisher.publish(1)
        let before = try #require(try PublishRaceTests.headVersion(publisher))
        let (a, holdA) = try PublishRaceTests.held(publisher, at: "lease-write", release: 2)
        let (b, holdB) = try PublishRaceTests.held(publisher, at: "layout", release: 3)
        // B holds the lock and has written its store objects; A now writes its lease over B's.
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
        if ranB.status == 0 {
            // B renewed its lease right before A's write landed, so A read B's back and waited for B to end.
            let versionB = (try? ranB.json()["version"] as? NSNumber)?.int64Value ?? 0
            #expect(versionA > versionB && versionB > before, "B \(versionB), then A \(versionA)")
        } else {
            #expect(ranB.stderr.contains("took this one's lock") || ranB.stderr.contains("changed while this publish ran"), "B: \(ranB.stderr)")
            #expect(versionA > before)
        }
        #expect(try PublishRaceTests.headVersion(publisher) == versionA, "the head is A's, the last writer's")
        #expect(try publisher.sync("after the slow claim")["outcome"] as? String == "committed")
        #expect(try publisher.served() == "<h1>release 2</h1>")
        let verified = try Binary.run(["verify", "--cache", publisher.dir.path("device/cache"), "--preset", publisher.dir.path("device/preset")])
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    }

    /// The holder reads its lease again before its layout (the settle is as short as a quarter
    /// second on a fast store): B read that no lease was live before A wrote its own, and writes its
    /// lease over A's while A, holding the lock, is between its store objects and its layout. A
    /// stops there, before any file at its uri or the head; B, whose claim was slow, waits out a
    /// renewal, holds the lock and publishes. Without A's look, both would write a layout.
    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aHolderWhoseLeaseWasOverwrittenStopsBeforeItsLayout() async throws {
        let (_, _, publisher) = try await PublishTests.Publisher.onObjectStore("overwritten")
        try publisher.publish(1)
        let before = try #require(try PublishRaceTests.headVersion(publisher))
        let (b, holdB) = try PublishRaceTests.held(publisher, at: "lease-write", release: 3)
        let (a, holdA) = try PublishRaceTests.held(publisher, at: "layout", release: 2)
        try FileManager.default.removeItem(atPath: holdB)
        // B's lease lands over A's within a request; A then goes on to its layout.
        try await Task.sleep(for: .seconds(1))
        try FileManager.default.removeItem(atPath: holdA)
        let ranA = try a.wait()
        #expect(ranA.status != 0 && ranA.stderr.contains("took this one's lock"), "A: \(ranA.stdout) \(ranA.stderr)")
        #expect(try PublishRaceTests.headVersion(publisher) == before, "A wrote no head")
        let ranB = try b.wait()
        #expect(ranB.status == 0, "B: \(ranB.stderr)")
        let versionB = try #require((try? ranB.json()["version"] as? NSNumber)?.int64Value, "\(ranB.stdout)")
        #expect(versionB > before)
        #expect(try PublishRaceTests.headVersion(publisher) == versionB)
        #expect(try publisher.sync("after the overwritten lease")["outcome"] as? String == "committed")
        #expect(try publisher.served() == "<h1>release 3</h1>")
    }
}
