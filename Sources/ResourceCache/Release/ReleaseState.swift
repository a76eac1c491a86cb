import RouteSync

/// What the cache knows about releases beyond the `current` link (G9): the last generation
/// the app confirmed, the one on trial with its deadline, and the last rollback.
///
/// Deadlines are wall-clock seconds since 1970, not a monotonic reading: a trial must go on
/// counting while the daemon is down or the machine is off, and a deadline that passed then
/// rolls back at the next start.
package struct ReleaseState: Sendable, Codable, Equatable {
    package struct Trial: Sendable, Codable, Equatable {
        package var generation: Int
        package var startedAt: Double
        package var deadline: Double

        package init(generation: Int, startedAt: Double, deadline: Double) {
            self.generation = generation
            self.startedAt = startedAt
            self.deadline = deadline
        }
    }

    package struct RollbackRecord: Sendable, Codable, Equatable {
        package var from: Int
        /// nil: no confirmed generation was left, so the preset is in force again.
        package var to: Int?
        package var reason: RollbackReason
        package var at: Double
        /// One line for people: what failed.
        package var detail: String?

        package init(from: Int, to: Int?, reason: RollbackReason, at: Double, detail: String? = nil) {
            self.from = from
            self.to = to
            self.reason = reason
            self.at = at
            self.detail = detail
        }
    }

    /// The generation a failed trial goes back to; nil means the preset.
    package var confirmed: Int?
    package var trial: Trial?
    package var lastRollback: RollbackRecord?

    package init(confirmed: Int? = nil, trial: Trial? = nil, lastRollback: RollbackRecord? = nil) {
        self.confirmed = confirmed
        self.trial = trial
        self.lastRollback = lastRollback
    }
}

/// Why a generation stopped being current without a newer release (the metric's label).
package enum RollbackReason: String, Sendable, Codable, CaseIterable {
    /// No confirmation by the trial's deadline.
    case timeout
    /// The health command or URL failed.
    case health
    /// An operator: `cenariusd rollback` or `POST /_cenarius/rollback`.
    case manual
}
