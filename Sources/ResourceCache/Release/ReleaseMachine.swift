package import RouteSync

/// The one release state (G9, G10) as a pure state machine: what is current, what is confirmed,
/// what is on trial until when, which releases failed, whether a hold is active, and a switch
/// back decided but not yet made. Every caller — a sync's commit (the daemon's or another
/// process's), the trial's deadline, the health check, `ready`, `confirm`, `rollback`, holds, a
/// restart — sends it an event and carries out the actions it returns. No clock, no files, no
/// timers: one actor in the daemon owns it (`ReleaseSupervisor`), the command line uses it when no
/// daemon runs, the tests drive it alone.
///
/// Invariants (`violations()`; `ReleaseMachineInterleavingTests` checks them after every event of
/// thousands of random interleavings):
/// 1. A switch back always goes to the last *confirmed* generation: a failed trial's to
///    `state.confirmed`, an operator's from a confirmed release to the newest kept one before it
///    that was confirmed (not failed, not `unproven`), never to one that merely came before.
/// 2. A failed release (`state.failed`) is never current again; only a new commit (the remote
///    publishing it anew makes a new generation) brings its table back.
/// 3. With no trial (and no switch under way), current = confirmed.
/// 4. A trial is always of the current generation, which is not the confirmed one.
/// 5. While a hold is active nothing switches but a failed trial's rollback: commits wait
///    (`allowsCommit`), an operator's rollback is refused.
/// 6. A switch decided (`switching`) is a state of its own: until it is made or abandoned,
///    confirmations are answered "busy" and no other switch is decided, so nothing decided on a
///    view of the world is carried out after the world changed.
package struct ReleaseMachine: Sendable, Equatable {
    /// Leave to move `current`. Only the release machine makes one (the initialiser is private to
    /// this file), and each of GenerationStore's moves (`commit`, `activate`, `deactivate`) takes
    /// one: no path switches a release without the machine having allowed that switch.
    package struct SwitchPermit: Sendable {
        fileprivate init() {}
    }

    /// How a switch is proven. nil timeout and no health check: no trials at all.
    package struct Policy: Sendable, Equatable {
        /// Seconds a new generation has to be confirmed.
        package var confirmTimeout: Double
        /// A health check runs after each switch (its pass confirms, its failure rolls back).
        package var healthCheck: Bool

        package init(confirmTimeout: Double, healthCheck: Bool) {
            self.confirmTimeout = confirmTimeout
            self.healthCheck = healthCheck
        }

        /// 60 s when only a health check is configured (the contract's default).
        package static let defaultTimeout: Double = 60
    }

    /// What the machine cannot know by itself about a generation that became current.
    package struct Provenance: Sendable, Equatable {
        /// Its table is byte for byte the preset's: the release the app shipped with, already proven.
        package var sameAsPreset: Bool
        /// The preset has a table to fall back to when nothing was confirmed yet.
        package var presetAvailable: Bool

        package init(sameAsPreset: Bool, presetAvailable: Bool) {
            self.sameAsPreset = sameAsPreset
            self.presetAvailable = presetAvailable
        }
    }

    package enum Action: Sendable, Equatable {
        /// A trial began (or resumed after a restart): arm a timer for the deadline.
        case startTrial(ReleaseState.Trial, previous: Int?, resumed: Bool)
        /// Run the health check for this generation.
        case runHealthCheck(generation: Int)
        case confirmed(generation: Int)
        /// Make this switch back on the writer lock (behind any sync in flight), then report it
        /// with `switchFinished`.
        case switchBack(ReleaseState.RollbackRecord)
        /// The switch back was made: tell everyone who watches.
        case rolledBack(ReleaseState.RollbackRecord)
        /// The switch back could not be made now: try the trial's failure again later.
        case retry(ReleaseState.RollbackRecord)
        /// The trial failed, but there is nothing to go back to (no confirmed generation, no
        /// preset table): the generation stays on trial until confirmed.
        case nothingToRollBackTo(ReleaseState.RollbackRecord)
        /// Whatever watches the trial (timer, health check) stops.
        case endTrialWork
    }

    package enum ConfirmAnswer: Sendable, Equatable {
        /// The trial ended with this confirmation.
        case confirmed
        /// Already confirmed (idempotent).
        case alreadyConfirmed
        /// Not the generation on trial, nor the confirmed current one: the page that asked was
        /// loaded from another generation (409).
        case conflict(onTrial: Int?, current: Int?)
        /// A switch back from `from` is under way (409): confirming now would be undone by it.
        case busy(from: Int, to: Int?)
    }

    /// An operator's rollback: the switch it decided, or why not.
    package enum RollbackAnswer: Sendable, Equatable {
        case switching(ReleaseState.RollbackRecord)
        case refused(CenariusError)
    }

    package enum SwitchOutcome: Sendable, Equatable {
        /// `current` now names the target.
        case made
        /// `current` no longer named the generation to leave (a newer release replaced it).
        case superseded
        case failed(String)
    }

    package private(set) var state: ReleaseState
    /// SIGHUP may change it: a trial under way keeps its deadline, the next one takes the new policy.
    package var policy: Policy?
    /// The generation the `current` link names, as this machine last heard (nil: the preset).
    package private(set) var current: Int?
    /// A switch back decided and not yet made (it may be waiting for the writer lock).
    package private(set) var switching: ReleaseState.RollbackRecord? {
        get { state.switching }
        set { state.switching = newValue }
    }
    /// When the last active hold ends (unix seconds); nil: none.
    package private(set) var holdsUntil: Double?
    /// The preset has a table to fall back to.
    package private(set) var presetAvailable = true

    package init(state: ReleaseState, policy: Policy?, current: Int? = nil) {
        self.state = state
        self.policy = policy
        self.current = current
    }

    // MARK: Events

    /// The daemon starts (or the command line acts) with `current` in force: resume a trial with
    /// the time left, roll back one whose deadline passed while nothing ran, and treat a
    /// generation committed while no trial was recorded (a crash between the switch and the state
    /// write, or a `sync` from the command line) as a trial that began when it was committed.
    package mutating func start(current: Int?, committedAt: Double?, provenance: Provenance, now: Double) -> [Action] {
        self.current = current
        presetAvailable = provenance.presetAvailable
        var finished: [Action] = []
        if let record = switching {
            // A switch back was decided before the stop: made if `current` names its target.
            finished = switchFinished(record, current == record.to && current != record.from ? .made : .superseded)
                .filter { if case .rolledBack = $0 { true } else { false } }
        }
        return finished + decideAtStart(current: current, committedAt: committedAt, provenance: provenance, now: now)
    }

    private mutating func decideAtStart(current: Int?, committedAt: Double?, provenance: Provenance, now: Double) -> [Action] {
        guard let current else {
            // Nothing committed (or everything rolled back to the preset): nothing is on trial.
            state.trial = nil
            state.confirmed = nil
            return []
        }
        guard let policy, needsTrial(current, provenance) else {
            state.trial = nil
            state.markConfirmed(current)
            return []
        }
        if state.confirmed == current {
            state.trial = nil
            return []
        }
        let trial: ReleaseState.Trial
        if let recorded = state.trial, recorded.generation == current {
            trial = recorded
        } else {
            let began = committedAt ?? now
            trial = .init(generation: current, startedAt: began, deadline: began + policy.confirmTimeout)
            state.trial = trial
        }
        state.markTried(current)
        if now >= trial.deadline {
            return failTrial(current, reason: .timeout, now: now, detail: "the deadline passed while the daemon was not running")
        }
        var actions: [Action] = [.startTrial(trial, previous: state.confirmed, resumed: true)]
        if policy.healthCheck { actions.append(.runHealthCheck(generation: current)) }
        return actions
    }

    /// The `current` link was read: when it moved without this machine hearing of it (a `sync`
    /// or `resolve` process committed, or the daemon's own sync finished before it said so),
    /// the move is taken in as the commit or switch it was.
    package mutating func observed(current seen: Int?, committedAt: Double?, provenance: Provenance, now: Double) -> [Action] {
        presetAvailable = provenance.presetAvailable
        guard seen != current else { return [] }
        if let seen, seen > (current ?? 0) { return committed(seen, provenance: provenance, now: now) }
        // Moved back by someone else: decide again from what is on disk, as at a start.
        return [.endTrialWork] + start(current: seen, committedAt: committedAt, provenance: provenance, now: now)
    }

    /// Leave for a sync to switch to a new generation now: given while no hold is active (invariant 5).
    package func permitCommit(now: Double) -> SwitchPermit? {
        holdActive(now: now) ? nil : SwitchPermit()
    }

    /// Leave to make the switch back this machine decided (`switching`), and only that one
    /// (invariant 6): a record made up elsewhere, or one already made or abandoned, gets none.
    package func permitSwitch(_ record: ReleaseState.RollbackRecord) -> SwitchPermit? {
        switching == record ? SwitchPermit() : nil
    }

    /// A sync made `generation` current. Without a policy it is confirmed at once, and so is a
    /// generation that cannot fail: the preset's own table, or the first release when there is
    /// nothing at all to fall back to. Otherwise it goes on trial, and the rollback target stays
    /// the last confirmed generation even when an earlier trial is still running (superseded,
    /// and so is a switch back from it that was waiting for the lock).
    package mutating func committed(_ generation: Int, provenance: Provenance, now: Double) -> [Action] {
        presetAvailable = provenance.presetAvailable
        guard generation != current else { return [] }
        current = generation
        switching = nil
        guard let policy, needsTrial(generation, provenance) else {
            state.trial = nil
            state.markConfirmed(generation)
            return [.confirmed(generation: generation)]
        }
        let trial = ReleaseState.Trial(generation: generation, startedAt: now, deadline: now + policy.confirmTimeout)
        state.trial = trial
        state.markTried(generation)
        var actions: [Action] = [.startTrial(trial, previous: state.confirmed, resumed: false)]
        if policy.healthCheck { actions.append(.runHealthCheck(generation: generation)) }
        return actions
    }

    /// `POST /_cenarius/ready` or `cenariusd confirm` for `generation`.
    package mutating func confirm(_ generation: Int) -> (ConfirmAnswer, [Action]) {
        if let switching { return (.busy(from: switching.from, to: switching.to), []) }
        if let trial = state.trial {
            guard trial.generation == generation else { return (.conflict(onTrial: trial.generation, current: current), []) }
            state.trial = nil
            state.markConfirmed(generation)
            return (.confirmed, [.confirmed(generation: generation)])
        }
        // No trial: the page confirms what is current (0 stands for the preset before any sync).
        if generation == (current ?? 0) {
            // Already equal by invariant 3, unless the commit was made by a process that recorded
            // no state (a `sync` from a shell with no daemon running).
            state.markConfirmed(current)
            return (.alreadyConfirmed, [])
        }
        return (.conflict(onTrial: nil, current: current), [])
    }

    /// The timer armed for a trial fired.
    package mutating func deadlineReached(_ generation: Int, now: Double) -> [Action] {
        guard switching == nil, let trial = state.trial, trial.generation == generation, now >= trial.deadline else { return [] }
        let within = Self.seconds(trial.deadline - trial.startedAt)
        // With a health check configured, a deadline without a pass is the check's failure.
        if policy?.healthCheck == true {
            return failTrial(generation, reason: .health, now: now, detail: "the health check did not pass within \(within)")
        }
        return failTrial(generation, reason: .timeout, now: now, detail: "not confirmed within \(within)")
    }

    /// The health check for `generation` finished.
    package mutating func healthChecked(_ generation: Int, passed: Bool, detail: String, now: Double) -> [Action] {
        guard switching == nil, let trial = state.trial, trial.generation == generation else { return [] }
        if passed {
            state.trial = nil
            state.markConfirmed(generation)
            return [.confirmed(generation: generation)]
        }
        return failTrial(generation, reason: .health, now: now, detail: detail)
    }

    /// A failed trial's switch back could not be made (`.retry`): decide it again, unless the
    /// trial ended meanwhile (a newer commit, a confirmation, a restart).
    package mutating func retryFailedTrial(_ record: ReleaseState.RollbackRecord, now: Double) -> [Action] {
        guard switching == nil, state.trial?.generation == record.from else { return [] }
        return failTrial(record.from, reason: record.reason, now: now, detail: record.detail ?? "")
    }

    /// `cenariusd rollback` or `POST /_cenarius/rollback`. A release on trial goes back to the
    /// confirmed one; a confirmed release to the newest confirmed generation before it that is
    /// still kept (`kept`), else the preset. Refused while a hold is active or a switch is under way.
    package mutating func rollbackRequested(kept: Set<Int>, now: Double) -> RollbackAnswer {
        if let switching {
            return .refused(.usage("a rollback from generation \(switching.from) is already under way"))
        }
        if holdActive(now: now) {
            return .refused(.usage("a hold is active until \(Whole.text(holdsUntil ?? now)): no switch is made while one is (release the hold first)"))
        }
        guard let current else { return .refused(.notFound("nothing to roll back: no generation is current")) }
        let target: Int?
        if state.trial != nil {
            target = state.confirmed
        } else {
            target = kept.filter { $0 < current && !state.failed.contains($0) && !state.unproven.contains($0) }.max()
        }
        if target == nil && !presetAvailable {
            return .refused(.notFound("no confirmed generation older than \(current) is kept, and the preset has no table"))
        }
        let record = ReleaseState.RollbackRecord(from: current, to: target, reason: .manual, at: now, detail: "requested by an operator")
        switching = record
        return .switching(record)
    }

    /// The switch back decided earlier was made, found superseded, or failed.
    package mutating func switchFinished(_ record: ReleaseState.RollbackRecord, _ outcome: SwitchOutcome) -> [Action] {
        guard switching == record else { return [] }
        switching = nil
        switch outcome {
        case .made:
            current = record.to
            state.trial = nil
            state.markFailed(record.from)
            state.markConfirmed(record.to)
            state.lastRollback = record
            return [.endTrialWork, .rolledBack(record)]
        case .superseded:
            return []
        case .failed:
            return record.reason == .manual ? [] : [.retry(record)]
        }
    }

    /// The active holds changed: `until` is when the last one ends (nil: none is active).
    package mutating func holdsChanged(until: Double?) {
        holdsUntil = until
    }

    // MARK: Invariants

    /// What is wrong with this state, if anything (empty: every invariant holds).
    package func violations() -> [String] {
        var found: [String] = []
        if let current, state.failed.contains(current) { found.append("failed generation \(current) is current") }
        if let trial = state.trial {
            if trial.generation != current { found.append("trial of \(trial.generation) while \(current.map(String.init) ?? "preset") is current") }
            if state.confirmed == trial.generation { found.append("generation \(trial.generation) is both on trial and confirmed") }
        } else if switching == nil, current != state.confirmed {
            found.append("no trial, but current \(current.map(String.init) ?? "preset") ≠ confirmed \(state.confirmed.map(String.init) ?? "preset")")
        }
        if let switching {
            if switching.from != current { found.append("a switch from \(switching.from) while \(current.map(String.init) ?? "preset") is current") }
            if switching.reason != .manual, switching.to != state.confirmed {
                found.append("a failed trial goes to \(switching.to.map(String.init) ?? "preset"), not the confirmed \(state.confirmed.map(String.init) ?? "preset")")
            }
            if let to = switching.to, state.failed.contains(to) { found.append("a switch back to failed generation \(to)") }
            if let to = switching.to, state.unproven.contains(to) { found.append("a switch back to generation \(to), never confirmed") }
        }
        if let confirmed = state.confirmed, state.failed.contains(confirmed) { found.append("failed generation \(confirmed) is confirmed") }
        return found
    }

    // MARK: Helpers

    private func holdActive(now: Double) -> Bool {
        (holdsUntil ?? -.infinity) > now
    }

    private func needsTrial(_ generation: Int, _ provenance: Provenance) -> Bool {
        if provenance.sameAsPreset { return false }
        return state.confirmed != nil || provenance.presetAvailable
    }

    /// A failed trial goes back to the last confirmed generation, hold or no hold.
    private mutating func failTrial(_ generation: Int, reason: RollbackReason, now: Double, detail: String) -> [Action] {
        let record = ReleaseState.RollbackRecord(from: generation, to: state.confirmed, reason: reason, at: now, detail: detail)
        if record.to == nil && !presetAvailable { return [.endTrialWork, .nothingToRollBackTo(record)] }
        switching = record
        return [.switchBack(record)]
    }

    static func seconds(_ value: Double) -> String {
        Whole.text(value) + " s"
    }
}
