import ResourceCache
import Testing

/// The trial (G9) as a pure state machine: every transition, no clock, no files.
@Suite struct ReleaseMachineTests {
    let policy = ReleaseMachine.Policy(confirmTimeout: 60, healthCheck: false)
    let fresh = ReleaseMachine.Provenance(sameAsPreset: false, presetAvailable: true)

    func confirmedAt(_ generation: Int?, policy: ReleaseMachine.Policy? = nil) -> ReleaseMachine {
        ReleaseMachine(state: ReleaseState(confirmed: generation), policy: policy ?? self.policy, current: generation)
    }

    @Test func aSwitchStartsATrialThatAConfirmationEnds() {
        var machine = confirmedAt(5)
        let actions = machine.committed(6, provenance: fresh, now: 1000)
        let trial = ReleaseState.Trial(generation: 6, startedAt: 1000, deadline: 1060)
        #expect(actions == [.startTrial(trial, previous: 5, resumed: false)])
        #expect(machine.state.trial == trial)
        #expect(machine.state.confirmed == 5)

        let (answer, after) = machine.confirm(6)
        #expect(answer == .confirmed)
        #expect(after == [.confirmed(generation: 6)])
        #expect(machine.state == ReleaseState(confirmed: 6))
        // Confirming again is accepted (idempotent) and changes nothing.
        #expect(machine.confirm(6).0 == .alreadyConfirmed)
        #expect(machine.state == ReleaseState(confirmed: 6))
    }

    @Test func aConfirmationFromAnotherGenerationIsRefused() {
        var machine = confirmedAt(5)
        _ = machine.committed(6, provenance: fresh, now: 1000)
        // The old page (generation 5) must not confirm the new bundle.
        let (answer, actions) = machine.confirm(5)
        #expect(answer == .conflict(onTrial: 6, current: 6))
        #expect(actions.isEmpty)
        #expect(machine.state.trial?.generation == 6)
        #expect(machine.confirm(7).0 == .conflict(onTrial: 6, current: 6))
    }

    @Test func theDeadlineRollsBackToTheLastConfirmedGeneration() {
        var machine = confirmedAt(5)
        _ = machine.committed(6, provenance: fresh, now: 1000)
        #expect(machine.deadlineReached(6, now: 1059.9).isEmpty, "not before the deadline")
        #expect(machine.deadlineReached(7, now: 2000).isEmpty, "a timer of another trial")
        let actions = machine.deadlineReached(6, now: 1060)
        let record = ReleaseState.RollbackRecord(from: 6, to: 5, reason: .timeout, at: 1060, detail: "not confirmed within 60 s")
        #expect(actions == [.switchBack(record)])
        #expect(machine.switching == record, "the switch back is a state of its own until it is made")
        #expect(machine.switchFinished(record, .made) == [.endTrialWork, .rolledBack(record)])
        #expect(machine.state == ReleaseState(confirmed: 5, trial: nil, lastRollback: record, failed: [6]))
        #expect(machine.current == 5)
    }

    @Test func aNewerReleaseDuringATrialKeepsTheConfirmedTarget() {
        var machine = confirmedAt(5)
        _ = machine.committed(6, provenance: fresh, now: 1000)
        _ = machine.committed(7, provenance: fresh, now: 1010)
        #expect(machine.state.trial?.generation == 7)
        #expect(machine.deadlineReached(6, now: 1060).isEmpty, "the superseded trial's timer does nothing")
        guard case .switchBack(let record) = machine.deadlineReached(7, now: 1070).first else {
            Issue.record("no rollback")
            return
        }
        #expect(record.from == 7 && record.to == 5)
    }

    @Test func healthResultsConfirmOrRollBack() {
        let withHealth = ReleaseMachine.Policy(confirmTimeout: 60, healthCheck: true)
        var machine = confirmedAt(5, policy: withHealth)
        let actions = machine.committed(6, provenance: fresh, now: 1000)
        #expect(actions.last == .runHealthCheck(generation: 6))
        #expect(machine.healthChecked(9, passed: true, detail: "", now: 1001).isEmpty, "a result for another generation")
        #expect(machine.healthChecked(6, passed: true, detail: "ok", now: 1001) == [.confirmed(generation: 6)])
        #expect(machine.state.confirmed == 6)

        _ = machine.committed(7, provenance: fresh, now: 2000)
        // A check that never passes fails at the deadline, as a health failure.
        var silent = machine
        #expect(silent.deadlineReached(7, now: 2060) == [.switchBack(.init(from: 7, to: 6, reason: .health, at: 2060, detail: "the health check did not pass within 60 s"))])
        let failed = machine.healthChecked(7, passed: false, detail: "health command exit status 1", now: 2001)
        #expect(failed == [.switchBack(.init(from: 7, to: 6, reason: .health, at: 2001, detail: "health command exit status 1"))])
    }

    @Test func aRestartResumesWithTheTimeLeftOrRollsBackPastTheDeadline() {
        var running = confirmedAt(5)
        _ = running.committed(6, provenance: fresh, now: 1000)
        let saved = running.state

        var early = ReleaseMachine(state: saved, policy: policy)
        let resumed = early.start(current: 6, committedAt: 1000, provenance: fresh, now: 1030)
        #expect(resumed == [.startTrial(.init(generation: 6, startedAt: 1000, deadline: 1060), previous: 5, resumed: true)])

        var late = ReleaseMachine(state: saved, policy: policy)
        guard case .switchBack(let record) = late.start(current: 6, committedAt: 1000, provenance: fresh, now: 1061).first else {
            Issue.record("no rollback at start")
            return
        }
        #expect(record.from == 6 && record.to == 5 && record.reason == .timeout)
    }

    @Test func aGenerationCommittedWithoutARecordedTrialIsTriedFromItsCommitTime() {
        // A crash between the switch and the state write, or a `sync` from a shell.
        var machine = confirmedAt(5)
        let actions = machine.start(current: 6, committedAt: 1000, provenance: fresh, now: 1010)
        #expect(actions == [.startTrial(.init(generation: 6, startedAt: 1000, deadline: 1060), previous: 5, resumed: true)])
        var late = confirmedAt(5)
        #expect(late.start(current: 6, committedAt: 1000, provenance: fresh, now: 5000).count == 1)
        #expect(late.switching?.reason == .timeout)
    }

    @Test func withoutAPolicyEverySwitchIsConfirmedAtOnce() {
        var machine = ReleaseMachine(state: ReleaseState(confirmed: 5), policy: nil, current: 5)
        #expect(machine.committed(6, provenance: fresh, now: 1000) == [.confirmed(generation: 6)])
        #expect(machine.state == ReleaseState(confirmed: 6))
        var restarted = ReleaseMachine(state: ReleaseState(confirmed: 5, trial: .init(generation: 6, startedAt: 0, deadline: 1)), policy: nil)
        #expect(restarted.start(current: 6, committedAt: 0, provenance: fresh, now: 100).isEmpty)
        #expect(restarted.state == ReleaseState(confirmed: 6))
    }

    @Test func releasesThatCannotFailAreNotOnTrial() {
        // The preset's own table is the release the app shipped with.
        var machine = confirmedAt(nil)
        let same = ReleaseMachine.Provenance(sameAsPreset: true, presetAvailable: true)
        #expect(machine.committed(1, provenance: same, now: 0) == [.confirmed(generation: 1)])
        // Nothing confirmed and no preset: a rollback would leave nothing to serve.
        var bare = confirmedAt(nil)
        let nothing = ReleaseMachine.Provenance(sameAsPreset: false, presetAvailable: false)
        #expect(bare.committed(1, provenance: nothing, now: 0) == [.confirmed(generation: 1)])
        // ... but the next release has a confirmed generation to go back to.
        #expect(bare.committed(2, provenance: nothing, now: 0).first == .startTrial(.init(generation: 2, startedAt: 0, deadline: 60), previous: 1, resumed: false))
        // With a preset, the first release is on trial and falls back to the preset (to: nil).
        var first = confirmedAt(nil)
        _ = first.committed(1, provenance: fresh, now: 0)
        #expect(first.deadlineReached(1, now: 60) == [.switchBack(.init(from: 1, to: nil, reason: .timeout, at: 60, detail: "not confirmed within 60 s"))])
    }

    @Test func anOperatorsRollbackEndsTheTrial() {
        var machine = confirmedAt(5)
        _ = machine.committed(6, provenance: fresh, now: 1000)
        guard case .switching(let record) = machine.rollbackRequested(kept: [5, 6], now: 1005) else {
            Issue.record("refused")
            return
        }
        #expect(record.from == 6 && record.to == 5 && record.reason == .manual)
        _ = machine.switchFinished(record, .made)
        #expect(machine.state.trial == nil)
        #expect(machine.state.confirmed == 5)
        #expect(machine.state.lastRollback?.reason == .manual)
        #expect(machine.deadlineReached(6, now: 2000).isEmpty)
    }

    /// The finding: B fails its trial and is rolled back, C goes on trial, and an operator's
    /// rollback went to B (the generation before C) instead of the last confirmed A.
    @Test func anOperatorsRollbackNeverResurrectsAFailedRelease() {
        var machine = confirmedAt(1)
        _ = machine.committed(2, provenance: fresh, now: 0)
        guard case .switchBack(let failed) = machine.deadlineReached(2, now: 60).first else { Issue.record("no rollback"); return }
        _ = machine.switchFinished(failed, .made)
        _ = machine.committed(3, provenance: fresh, now: 100)
        guard case .switching(let manual) = machine.rollbackRequested(kept: [1, 2, 3], now: 110) else { Issue.record("refused"); return }
        #expect(manual.from == 3 && manual.to == 1)
        _ = machine.switchFinished(manual, .made)
        // From the confirmed 1 an operator goes further back only to an older confirmed release.
        #expect(machine.rollbackRequested(kept: [1, 2, 3], now: 120) == .switching(.init(from: 1, to: nil, reason: .manual, at: 120, detail: "requested by an operator")))
        #expect(machine.violations().isEmpty)
    }

    @Test func anOperatorsRollbackOfAConfirmedReleaseSkipsATrialThatWasNeverConfirmed() {
        var machine = confirmedAt(1)
        _ = machine.committed(2, provenance: fresh, now: 0)
        // 3 supersedes 2's trial and is confirmed: 2 was never proven.
        _ = machine.committed(3, provenance: fresh, now: 10)
        _ = machine.confirm(3)
        guard case .switching(let record) = machine.rollbackRequested(kept: [1, 2, 3], now: 20) else {
            Issue.record("refused")
            return
        }
        #expect(record.from == 3 && record.to == 1)
        // Without trials (or committed by a `sync` with no daemon) every generation was confirmed at once.
        var plain = ReleaseMachine(state: ReleaseState(), policy: nil, current: 3)
        guard case .switching(let previous) = plain.rollbackRequested(kept: [1, 2, 3], now: 0) else {
            Issue.record("refused")
            return
        }
        #expect(previous.to == 2)
    }

    @Test func aConfirmationWhileASwitchBackWaitsIsBusyAndACommitSupersedesIt() {
        var machine = confirmedAt(5)
        _ = machine.committed(6, provenance: fresh, now: 1000)
        guard case .switchBack(let record) = machine.deadlineReached(6, now: 1060).first else { Issue.record("no rollback"); return }
        #expect(machine.confirm(6).0 == .busy(from: 6, to: 5), "a late confirmation would be undone by the switch")
        // A sync committed 7 before the rollback got the writer lock: the switch is superseded.
        _ = machine.committed(7, provenance: fresh, now: 1061)
        #expect(machine.switching == nil)
        #expect(machine.switchFinished(record, .superseded).isEmpty)
        #expect(machine.state.trial?.generation == 7 && machine.state.confirmed == 5)
        #expect(machine.violations().isEmpty)
    }

    @Test func aHoldStopsAnOperatorsRollbackButNotAFailedTrials() {
        var machine = confirmedAt(5)
        _ = machine.committed(6, provenance: fresh, now: 1000)
        machine.holdsChanged(until: 2000)
        #expect(machine.permitCommit(now: 1001) == nil)
        guard case .refused = machine.rollbackRequested(kept: [5, 6], now: 1001) else { Issue.record("not refused"); return }
        guard case .switchBack = machine.deadlineReached(6, now: 1060).first else { Issue.record("a failed trial is not held"); return }
    }

    @Test func aCommitByAnotherProcessStartsItsTrialWhenSeen() {
        var machine = confirmedAt(5)
        let actions = machine.observed(current: 6, committedAt: 990, provenance: fresh, now: 1000)
        #expect(actions == [.startTrial(.init(generation: 6, startedAt: 1000, deadline: 1060), previous: 5, resumed: false)])
        // A page of 6 confirms it (the ready that lands between a commit and its trial's start).
        #expect(machine.confirm(6).0 == .confirmed)
        #expect(machine.state.confirmed == 6 && machine.violations().isEmpty)
    }

    @Test func beforeAnySyncThePresetConfirmsAsGenerationZero() {
        var machine = confirmedAt(nil)
        #expect(machine.confirm(0).0 == .alreadyConfirmed)
        #expect(machine.confirm(3).0 == .conflict(onTrial: nil, current: nil))
    }
}
