import RouteSync

/// The trial as a pure state machine (G9): events in, the new state and what to do out. No
/// clock, no files, no timers; the daemon feeds it and performs the actions, the tests drive it
/// alone.
package struct TrialMachine: Sendable, Equatable {
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

    package enum Action: Sendable, Equatable {
        /// A trial began (or resumed after a restart): arm a timer for the deadline.
        case startTrial(ReleaseState.Trial, previous: Int?, resumed: Bool)
        /// Run the health check for this generation.
        case runHealthCheck(generation: Int)
        case confirmed(generation: Int)
        /// Switch back to `to` (nil: the preset) and hold the failed table back.
        case rollBack(ReleaseState.RollbackRecord)
    }

    package enum ConfirmAnswer: Sendable, Equatable {
        /// The trial ended with this confirmation.
        case confirmed
        /// Already confirmed (idempotent).
        case alreadyConfirmed
        /// Not the generation on trial, nor the confirmed current one: the page that asked was
        /// loaded from another generation (409).
        case conflict(onTrial: Int?, current: Int?)
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

    package private(set) var state: ReleaseState
    package let policy: Policy?

    package init(state: ReleaseState, policy: Policy?) {
        self.state = state
        self.policy = policy
    }

    /// The daemon starts with `current` in force: resume a trial with the time left, roll back
    /// one whose deadline passed while it was down, and treat a generation committed while no
    /// trial was recorded (a crash between the switch and the state write, or a `sync` from the
    /// command line) as a trial that began when it was committed.
    package mutating func start(current: Int?, committedAt: Double?, provenance: Provenance, now: Double) -> [Action] {
        guard let current else {
            // Nothing committed (or everything rolled back to the preset): nothing is on trial.
            state.trial = nil
            return []
        }
        guard let policy, needsTrial(current, provenance) else {
            state.trial = nil
            state.confirmed = current
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
        if now >= trial.deadline {
            return [rollBack(from: current, reason: .timeout, now: now, detail: "the deadline passed while the daemon was not running")]
        }
        var actions: [Action] = [.startTrial(trial, previous: state.confirmed, resumed: true)]
        if policy.healthCheck { actions.append(.runHealthCheck(generation: current)) }
        return actions
    }

    /// A sync made `generation` current. Without a policy it is confirmed at once, and so is a
    /// generation that cannot fail: the preset's own table, or the first release when there is
    /// nothing at all to fall back to (rolling back would leave nothing to serve). Otherwise it
    /// goes on trial, and the rollback target stays the last confirmed generation even when an
    /// earlier trial is still running (that trial is superseded).
    package mutating func committed(_ generation: Int, provenance: Provenance, now: Double) -> [Action] {
        guard let policy, needsTrial(generation, provenance) else {
            state.trial = nil
            state.confirmed = generation
            return [.confirmed(generation: generation)]
        }
        let trial = ReleaseState.Trial(generation: generation, startedAt: now, deadline: now + policy.confirmTimeout)
        state.trial = trial
        var actions: [Action] = [.startTrial(trial, previous: state.confirmed, resumed: false)]
        if policy.healthCheck { actions.append(.runHealthCheck(generation: generation)) }
        return actions
    }

    /// `POST /_cenarius/ready` or `cenariusd confirm` for `generation` while `current` is in force.
    package mutating func confirm(_ generation: Int, current: Int?) -> (ConfirmAnswer, [Action]) {
        if let trial = state.trial {
            guard trial.generation == generation else { return (.conflict(onTrial: trial.generation, current: current), []) }
            state.trial = nil
            state.confirmed = generation
            return (.confirmed, [.confirmed(generation: generation)])
        }
        // No trial: the page confirms what is current (0 stands for the preset before any sync).
        if generation == (current ?? 0) {
            if let current { state.confirmed = current }
            return (.alreadyConfirmed, [])
        }
        return (.conflict(onTrial: nil, current: current), [])
    }

    /// The timer armed for a trial fired.
    package mutating func deadlineReached(_ generation: Int, now: Double) -> [Action] {
        guard let trial = state.trial, trial.generation == generation, now >= trial.deadline else { return [] }
        let within = Self.seconds(trial.deadline - trial.startedAt)
        // With a health check configured, a deadline without a pass is the check's failure.
        if policy?.healthCheck == true {
            return [rollBack(from: generation, reason: .health, now: now, detail: "the health check did not pass within \(within)")]
        }
        return [rollBack(from: generation, reason: .timeout, now: now, detail: "not confirmed within \(within)")]
    }

    /// The health check for `generation` finished.
    package mutating func healthChecked(_ generation: Int, passed: Bool, detail: String, now: Double) -> [Action] {
        guard let trial = state.trial, trial.generation == generation else { return [] }
        if passed {
            state.trial = nil
            state.confirmed = generation
            return [.confirmed(generation: generation)]
        }
        return [rollBack(from: generation, reason: .health, now: now, detail: detail)]
    }

    /// An operator rolled `from` back to `to`: whatever was on trial is over, and `to` is what
    /// later trials fall back to.
    package mutating func rolledBackManually(from: Int, to: Int?, now: Double) {
        state.trial = nil
        state.confirmed = to
        state.lastRollback = .init(from: from, to: to, reason: .manual, at: now, detail: "requested by an operator")
    }

    private func needsTrial(_ generation: Int, _ provenance: Provenance) -> Bool {
        if provenance.sameAsPreset { return false }
        return state.confirmed != nil || provenance.presetAvailable
    }

    private mutating func rollBack(from: Int, reason: RollbackReason, now: Double, detail: String) -> Action {
        let record = ReleaseState.RollbackRecord(from: from, to: state.confirmed, reason: reason, at: now, detail: detail)
        state.trial = nil
        state.lastRollback = record
        return .rollBack(record)
    }

    static func seconds(_ value: Double) -> String {
        Whole.text(value) + " s"
    }
}
