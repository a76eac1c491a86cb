import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import Transport
import TestOrigin

/// A sync's three steps and what each may change (SyncRun.run): the offer writes nothing
/// but its poll records, the stage fills the object store and builds a generation that lookups
/// do not see yet, and only the switch makes it current; a hold that arrives between the stage
/// and the switch leaves the old generation current and the staged one gone.
@Suite(.awaitsCleanups) struct SyncStepsTests {
    /// The run a sync makes for the fixture's remote, its steps taken one at a time.
    static func run(_ f: Fixture) throws -> SyncRun {
        SyncRun(syncer: f.syncer, remote: f.settings.remote!, mirrors: [], cache: try OpenedCache(layout: f.settings.cache),
                downloader: try Downloader(options: f.settings.transfer), started: FileSystem.monotonic(), cancel: nil, progress: nil)
    }

    static func offer(_ run: inout SyncRun) throws -> Offer {
        guard case .offered(let offer) = try run.offer() else { throw CenariusError.internal("no offer") }
        return offer
    }

    static func objectCount(_ layout: CacheLayout) -> Int {
        (FileManager.default.enumerator(atPath: layout.objects)?.allObjects as? [String])?.filter { !$0.hasSuffix("/") && $0.count > 3 }.count ?? 0
    }

    @Test func eachStepChangesOnlyWhatItOwns() async throws {
        let f = try await Fixture.registered()
        let layout = f.settings.cache
        try f.release(["index.html": "v1"])
        f.origin.publish(["index.html": "v2", "app.js": "two()"])
        var run = try Self.run(f)
        let objectsBefore = Self.objectCount(layout)

        let offer = try Self.offer(&run)
        #expect(offer.table.count == 2)
        #expect(Self.objectCount(layout) == objectsBefore, "the offer downloads nothing")
        #expect(GenerationStore(layout: layout).all().map(\.number) == [1], "the offer builds nothing")

        guard case .staged(let staged) = try run.stage(offer) else { Issue.record("not staged"); return }
        #expect(Self.objectCount(layout) == objectsBefore + 2, "the stage fills the store")
        #expect(FileManager.default.fileExists(atPath: staged.generation))
        #expect(GenerationStore(layout: layout).current()?.number == 1, "nothing is current before the switch")
        #expect(f.content(try f.resolve("index.html", offline: true)) == "v1")

        let report = try run.switchTo(staged)
        #expect(report.outcome == .committed && report.generation == 2)
        #expect(GenerationStore(layout: layout).current()?.number == 2)
        #expect(f.content(try f.resolve("index.html", offline: true)) == "v2")
    }

    @Test func aHoldBetweenTheStageAndTheSwitchKeepsTheOldGeneration() async throws {
        let f = try await Fixture.registered()
        let layout = f.settings.cache
        try f.release(["index.html": "v1"])
        f.origin.publish(["index.html": "v2"])
        var run = try Self.run(f)
        guard case .staged(let staged) = try run.stage(try Self.offer(&run)) else { Issue.record("not staged"); return }
        _ = try HoldStore(layout: layout).add(ttl: 60, reason: "payment")

        let report = try run.switchTo(staged)
        #expect(report.outcome == .held && report.generation == 1)
        #expect(report.deferred?.reason == "hold")
        #expect(GenerationStore(layout: layout).current()?.number == 1)
        #expect(!FileManager.default.fileExists(atPath: staged.generation), "the staged generation is gone; its files stay in the store")
        #expect(f.content(try f.resolve("index.html", offline: true)) == "v1")
    }
}
