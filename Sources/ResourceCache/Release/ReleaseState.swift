import ReportHeader
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
    /// Generations that went on trial and were never confirmed (a newer release superseded the
    /// trial): not proven, so an operator's rollback of a confirmed release never goes to one.
    /// Every other generation kept and not failed was confirmed, on trial or at once (committed
    /// with no trial configured, or by a `sync` with no daemon running).
    package var unproven: [Int]
    /// Generations rolled back from: never current again (the remote publishing the same table
    /// again makes a new generation).
    package var failed: [Int]
    /// A switch back decided and not yet made, written before it is made: a daemon killed
    /// between the switch and the state write learns at its start which one it was.
    package var switching: RollbackRecord?

    // The release records the machine does not decide, kept in the same file under the same lock
    // (the machine's own fields are written by its owner, these by whoever makes the event).

    /// The SHA-256 of the table this device rolled back from: a sync does not take it again
    /// until the remote offers another (a switch to any other clears it).
    package var heldBack: String?
    /// Releases this device rolled back or refused lately, newest first (its Cenarius-Report's `failed`).
    package var failedReleases: [String]
    /// The app's holds (G10), expired ones dropped at the next change.
    package var holds: [Hold]

    package init(confirmed: Int? = nil, trial: Trial? = nil, lastRollback: RollbackRecord? = nil,
                 unproven: [Int] = [], failed: [Int] = [], heldBack: String? = nil, failedReleases: [String] = [], holds: [Hold] = []) {
        self.confirmed = confirmed
        self.trial = trial
        self.lastRollback = lastRollback
        self.unproven = unproven
        self.failed = failed
        self.heldBack = heldBack
        self.failedReleases = failedReleases
        self.holds = holds
    }

    private enum CodingKeys: String, CodingKey {
        case confirmed, trial, lastRollback, unproven, failed, switching, heldBack, failedReleases, holds
    }

    /// A state file written before these lists existed reads with them derived from what it has.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        confirmed = try container.decodeIfPresent(Int.self, forKey: .confirmed)
        trial = try container.decodeIfPresent(Trial.self, forKey: .trial)
        lastRollback = try container.decodeIfPresent(RollbackRecord.self, forKey: .lastRollback)
        unproven = try container.decodeIfPresent([Int].self, forKey: .unproven) ?? trial.map { [$0.generation] } ?? []
        failed = try container.decodeIfPresent([Int].self, forKey: .failed) ?? lastRollback.map { [$0.from] } ?? []
        switching = try container.decodeIfPresent(RollbackRecord.self, forKey: .switching)
        heldBack = try container.decodeIfPresent(String.self, forKey: .heldBack)
        failedReleases = try container.decodeIfPresent([String].self, forKey: .failedReleases) ?? []
        holds = try container.decodeIfPresent([Hold].self, forKey: .holds) ?? []
    }

    /// The machine's fields from `machine`, this state's records kept: what the daemon writes,
    /// whose machine does not see a hold or a refused table recorded since it loaded.
    package mutating func takeMachine(_ machine: ReleaseState) {
        confirmed = machine.confirmed
        trial = machine.trial
        lastRollback = machine.lastRollback
        unproven = machine.unproven
        failed = machine.failed
        switching = machine.switching
    }

    /// A switch back leaves `given`: its table is held back and the release counted as given up.
    package mutating func giveUp(_ given: Rollback.GivenUp) {
        heldBack = given.table
        recordFailedRelease(given.release)
    }

    /// A release given up (rolled back from, or refused): first in `failedReleases`, a few kept.
    package mutating func recordFailedRelease(_ name: String) {
        guard failedReleases.first != name else { return }
        failedReleases.removeAll { $0 == name }
        failedReleases.insert(name, at: 0)
        if failedReleases.count > FleetReport.maxFailed { failedReleases.removeLast(failedReleases.count - FleetReport.maxFailed) }
    }

    /// How many generations each list remembers (older ones are long collected).
    static let kept = 32

    mutating func markConfirmed(_ generation: Int?) {
        confirmed = generation
        if let generation { unproven.removeAll { $0 == generation } }
    }

    mutating func markTried(_ generation: Int) {
        guard !unproven.contains(generation) else { return }
        unproven.append(generation)
        if unproven.count > Self.kept { unproven.removeFirst(unproven.count - Self.kept) }
    }

    mutating func markFailed(_ generation: Int) {
        unproven.removeAll { $0 == generation }
        guard !failed.contains(generation) else { return }
        failed.append(generation)
        if failed.count > Self.kept { failed.removeFirst(failed.count - Self.kept) }
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
