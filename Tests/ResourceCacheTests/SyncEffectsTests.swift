import Foundation
import Synchronization
import Testing
@testable import ResourceCache
import RouteSync
import TestOrigin

/// The order of a sync's changes to the cache, for every way a sync ends: the crash-safety
/// contract, pinned. Nothing is current before every file is adopted into the store and the
/// generation built; after the switch only bookkeeping follows. (`CrashBetweenEffectsTests` kills
/// the built binary before each of these and finds the cache whole.)
@Suite(.awaitsCleanups) struct SyncEffectsTests {
    final class Recorder: Sendable {
        let seen = Mutex<[SyncEffect]>([])
        var effects: SyncEffects { SyncEffects { [self] effect in seen.withLock { $0.append(effect) } } }
        func take() -> [SyncEffect] {
            seen.withLock { effects in
                let taken = effects
                effects = []
                return taken
            }
        }
    }

    func recorded() async throws -> (Fixture, Recorder) {
        var f = try await Fixture.registered()
        let recorder = Recorder()
        f.settings.effects = recorder.effects
        return (f, recorder)
    }

    /// After the switch, only bookkeeping: a crash there leaves the new release current and whole.
    static let bookkeeping: Set<SyncEffect> = [.heldBackCleared, .pendingCleared, .checked, .garbageCollected, .lastSync]

    @Test func everyOutcomeMakesItsChangesInOrder() async throws {
        var (f, recorder) = try await recorded()
        let layout = f.settings.cache
        func expectEffects(_ expected: [SyncEffect], _ what: Comment) {
            let seen = recorder.take()
            #expect(seen == expected, what)
            if let switched = seen.firstIndex(of: .committed) {
                #expect(seen[..<switched].contains(.generationBuilt), "\(what): built before the switch")
                #expect(seen[(switched + 1)...].allSatisfy(Self.bookkeeping.contains), "\(what): only bookkeeping after the switch")
            }
        }
        // A first install: the head is asked for first (none: remembered), then the compressed table (none).
        #expect(try f.release(["index.html": "v1", "app.js": "one"]).outcome == .committed)
        expectEffects([.attempted, .headState, .tableFormMarker, .lastPoll, .downloads, .generationBuilt, .committed, .checked,
                       .garbageCollected, .lastSync], "first install")
        #expect(try f.release(["index.html": "v2", "app.js": "one"]).outcome == .committed)
        expectEffects([.attempted, .lastPoll, .downloads, .generationBuilt, .committed, .checked, .garbageCollected, .lastSync], "a release")
        #expect(try f.sync().outcome == .notModified)
        expectEffects([.attempted, .lastPoll, .checked, .lastSync], "not modified")

        // Held: downloaded into the store and recorded as pending; the hold's end switches without a download.
        let hold = try HoldStore(layout: layout).add(ttl: 60, reason: "payment")
        f.origin.publish(["index.html": "v3", "app.js": "one"])
        #expect(try f.sync().outcome == .held)
        expectEffects([.attempted, .lastPoll, .downloads, .pending, .checked, .lastSync], "held")
        #expect(try HoldStore(layout: layout).remove(hold.id))
        #expect(try f.sync().outcome == .committed)
        expectEffects([.attempted, .lastPoll, .generationBuilt, .committed, .pendingCleared, .checked, .garbageCollected, .lastSync], "the hold ended")

        // Held back after a rollback: nothing but the poll's records.
        _ = try LocalRelease.rollback(settings: f.settings)
        _ = recorder.take()
        #expect(try f.sync().outcome == .heldBack)
        expectEffects([.attempted, .lastPoll, .checked, .lastSync], "held back")
        // Another release clears the table held back, after the switch.
        #expect(try f.release(["index.html": "v4", "app.js": "one"]).outcome == .committed)
        expectEffects([.attempted, .lastPoll, .downloads, .generationBuilt, .committed, .heldBackCleared, .checked, .garbageCollected,
                       .lastSync], "a release after the rollback")

        // A download that fails: the files verified are kept, nothing is built.
        f.origin.inject(.status(500), on: "app.js", times: 100)
        f.origin.publish(["index.html": "v5", "app.js": "two"])
        _ = expectError(.remote) { _ = try f.sync() }
        expectEffects([.attempted, .lastPoll, .downloads, .lastSync], "a failed download")
        f.origin.clearFaults()

        // A table refused (unsigned where a key is configured): counted as given up, nothing fetched.
        f.settings.tableVerifier = TableSignatureVerifier(key: SigningKeys.generate().1)
        f.settings.effects = recorder.effects
        _ = expectError(.integrity) { _ = try f.sync() }
        expectEffects([.attempted, .lastPoll, .failedRelease, .lastSync], "a refused table")
    }
}
