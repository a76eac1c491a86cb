import Foundation
import Synchronization
import Testing
@testable import ResourceCache
import RouteSync
import TestOrigin

/// Holds are written under `release.lock`; a sync checks them again under that lock at the switch
/// itself, so a hold answered 201 while a generation was being built stops that build's switch
/// (it used to be read once, without the lock, before the build).
@Suite(.awaitsCleanups) struct HoldAtSwitchTests {
    @Test func aHoldMadeDuringTheBuildStopsItsSwitch() async throws {
        let f = try await Fixture.registered()
        try f.release(["index.html": "v1"])
        f.origin.publish(["index.html": "v2"])
        let layout = f.settings.cache
        // The daemon is adding a hold: it holds release.lock while the sync builds.
        var lock: WriterLock? = try WriterLock(path: layout.releaseLock, timeout: 5, purpose: "test: add a hold")
        let result = Mutex<Result<SyncReport, CenariusError>?>(nil)
        let syncer = f.syncer
        let thread = Thread { result.withLock { $0 = Result { () throws(CenariusError) in try syncer.sync() } } }
        thread.start()
        // The sync has passed its early check (no hold then: it comes before the build) and goes on
        // to the switch, where it waits for the lock however far its build has got.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !FileManager.default.fileExists(atPath: layout.building(2)) { usleep(5_000) }
        #expect(FileManager.default.fileExists(atPath: layout.building(2)), "the build began")
        // Added as `HoldStore.add` adds it, under the lock this test holds.
        try ReleaseStore(layout: layout).updateHoldingLock {
            $0.holds.append(Hold(id: "h", reason: "payment", createdAt: FileSystem.now(), expires: FileSystem.now() + 60))
        }
        // The sync waits at the switch because the lock is really taken (a second taker is refused).
        #expect(try WriterLock.tryAcquire(path: layout.releaseLock) == nil)
        withExtendedLifetime(lock) {}
        lock = nil
        while Date() < deadline, result.withLock({ $0 == nil }) { usleep(5_000) }
        let report = try #require(try result.withLock { $0 }?.get())
        #expect(report.outcome == .held, "the hold answered during the build stops the switch")
        #expect(GenerationStore(layout: layout).current()?.number == 1)
        #expect(!FileManager.default.fileExists(atPath: layout.building(2)) && !FileManager.default.fileExists(atPath: layout.generation(2)))
    }
}
