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
    /// Every generation confirmed, oldest first (the last few): where an operator's rollback of a
    /// confirmed release goes back to.
    package var confirmedHistory: [Int]
    /// Generations rolled back from: never current again (the remote publishing the same table
    /// again makes a new generation).
    package var failed: [Int]
    /// A switch back decided and not yet made, written before it is made: a daemon killed
    /// between the switch and the state write learns at its start which one it was.
    package var switching: RollbackRecord?

    package init(confirmed: Int? = nil, trial: Trial? = nil, lastRollback: RollbackRecord? = nil,
                 confirmedHistory: [Int]? = nil, failed: [Int] = []) {
        self.confirmed = confirmed
        self.trial = trial
        self.lastRollback = lastRollback
        self.confirmedHistory = confirmedHistory ?? confirmed.map { [$0] } ?? []
        self.failed = failed
    }

    private enum CodingKeys: String, CodingKey {
        case confirmed, trial, lastRollback, confirmedHistory, failed, switching
    }

    /// A state file written before the history and the failed list existed reads with both
    /// derived from what it has.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        confirmed = try container.decodeIfPresent(Int.self, forKey: .confirmed)
        trial = try container.decodeIfPresent(Trial.self, forKey: .trial)
        lastRollback = try container.decodeIfPresent(RollbackRecord.self, forKey: .lastRollback)
        confirmedHistory = try container.decodeIfPresent([Int].self, forKey: .confirmedHistory) ?? confirmed.map { [$0] } ?? []
        failed = try container.decodeIfPresent([Int].self, forKey: .failed) ?? lastRollback.map { [$0.from] } ?? []
        switching = try container.decodeIfPresent(RollbackRecord.self, forKey: .switching)
    }

    /// How many confirmed generations are remembered (older ones are long collected).
    static let keptHistory = 32

    mutating func markConfirmed(_ generation: Int?) {
        confirmed = generation
        guard let generation, confirmedHistory.last != generation else { return }
        confirmedHistory.removeAll { $0 == generation }
        confirmedHistory.append(generation)
        if confirmedHistory.count > Self.keptHistory { confirmedHistory.removeFirst(confirmedHistory.count - Self.keptHistory) }
    }

    mutating func markFailed(_ generation: Int) {
        guard !failed.contains(generation) else { return }
        failed.append(generation)
        if failed.count > Self.keptHistory { failed.removeFirst(failed.count - Self.keptHistory) }
        confirmedHistory.removeAll { $0 == generation }
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
