import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import TestOrigin

/// Every way `current` moves takes the release machine's leave: GenerationStore's `commit`,
/// `activate` and `deactivate` each need a `SwitchPermit`, which only `ReleaseMachine` makes. The
/// leave itself, then each path on a real cache: a sync (held, then let through when the hold
/// ends, without a second download), an operator's rollback (refused under a hold, made after
/// it), and a failed trial's switch back (made under a hold: invariant 5's one exception).
@Suite(.awaitsCleanups) struct SwitchPathsTests {
    let fresh = ReleaseMachine.Provenance(sameAsPreset: false, presetAvailable: true)

    @Test func leaveIsGivenOnlyForWhatTheMachineDecided() {
        var machine = ReleaseMachine(state: ReleaseState(confirmed: 5), policy: .init(confirmTimeout: 60, healthCheck: false), current: 5)
        #expect(machine.permitCommit(now: 1000) != nil)
        machine.holdsChanged(until: 1100)
        #expect(machine.permitCommit(now: 1000) == nil, "a hold is active")
        #expect(machine.permitCommit(now: 1100) != nil, "the hold has ended")

        _ = machine.committed(6, provenance: fresh, now: 1000)
        let madeUp = ReleaseState.RollbackRecord(from: 6, to: 5, reason: .manual, at: 1001, detail: nil)
        #expect(machine.permitSwitch(madeUp) == nil, "a switch the machine did not decide")
        guard case .switchBack(let decided) = machine.deadlineReached(6, now: 1060).first else { Issue.record("no switch back"); return }
        #expect(machine.permitSwitch(decided) != nil)
        _ = machine.switchFinished(decided, .made)
        #expect(machine.permitSwitch(decided) == nil, "made once: no leave to make it again")
    }

    @Test func aSyncUnderAHoldWaitsAndTheHoldsEndLetsItThroughWithoutASecondDownload() async throws {
        let f = try await Fixture.registered()
        let layout = f.settings.cache
        #expect(try f.release(["index.html": "v1", "app.js": "one"]).outcome == .committed)
        f.origin.publish(["index.html": "v2", "app.js": "two"])
        let hold = try HoldStore(layout: layout).add(ttl: 60, reason: "payment")
        let held = try f.sync()
        #expect(held.outcome == .held)
        #expect(GenerationStore(layout: layout).current()?.number == 1)
        #expect(held.downloadedFiles == 2, "a held release is downloaded, not switched to")

        #expect(try HoldStore(layout: layout).remove(hold.id))
        f.origin.resetRequests()
        let released = try f.sync()
        #expect(released.outcome == .committed)
        #expect(GenerationStore(layout: layout).current()?.number == 2)
        #expect(released.downloadedFiles == 0 && f.fileRequests.isEmpty, "the held files are in the store: \(f.fileRequests)")
        #expect(f.content(try f.resolve("index.html", offline: true)) == "v2")
    }

    @Test func anOperatorsRollbackIsRefusedUnderAHoldAndMadeAfterIt() async throws {
        let f = try await Fixture.registered()
        let layout = f.settings.cache
        try f.release(["index.html": "v1"])
        try f.release(["index.html": "v2"])
        #expect(GenerationStore(layout: layout).current()?.number == 2)

        let hold = try HoldStore(layout: layout).add(ttl: 60, reason: "payment")
        let refused = expectError(.usage) { _ = try LocalRelease.rollback(settings: f.settings) }
        #expect(refused?.message.contains("a hold is active") == true)
        #expect(GenerationStore(layout: layout).current()?.number == 2, "nothing moved under the hold")

        #expect(try HoldStore(layout: layout).remove(hold.id))
        let result = try LocalRelease.rollback(settings: f.settings)
        #expect(result.from == 2 && result.to == 1)
        #expect(GenerationStore(layout: layout).current()?.number == 1)
        #expect(ReleaseStore(layout: layout).read().failed.contains(2))
        #expect(f.content(try f.resolve("index.html", offline: true)) == "v1")
    }

    @Test func aFailedTrialsSwitchBackIsMadeUnderAHold() async throws {
        let f = try await Fixture.registered()
        let layout = f.settings.cache
        try f.release(["index.html": "v1"])
        try f.release(["index.html": "v2"])
        _ = try HoldStore(layout: layout).add(ttl: 60, reason: "payment")

        var machine = ReleaseMachine(state: ReleaseState(confirmed: 1), policy: .init(confirmTimeout: 60, healthCheck: false), current: 1)
        machine.holdsChanged(until: FileSystem.now() + 60)
        _ = machine.committed(2, provenance: fresh, now: 1000)
        guard case .switchBack(let record) = machine.deadlineReached(2, now: 1060).first,
              let permit = machine.permitSwitch(record) else { Issue.record("no switch back decided"); return }
        #expect(Rollback.make(record, permit: permit, settings: f.settings) == .made)
        #expect(GenerationStore(layout: layout).current()?.number == 1)
        // The table rolled back from is held back: the next poll does not bring it again.
        #expect(try f.sync().outcome == .heldBack)
        #expect(GenerationStore(layout: layout).current()?.number == 1)
    }
}
