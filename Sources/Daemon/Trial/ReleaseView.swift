import ResourceCache
import Synchronization

/// The release state as the request path reads it (status, receipts, `/health`) without a hop
/// to the supervisor actor: a copy the supervisor replaces after every change, plus how each
/// generation's trial ended.
final class ReleaseView: Sendable {
    struct Snapshot: Sendable {
        var state = ReleaseState()
        var trialsEnabled = false
        /// Rollbacks of this daemon's life by the generation rolled back from.
        var rolledBack: [Int: ReleaseState.RollbackRecord] = [:]
        var rollbacks = 0
        /// Trials' deadlines of this daemon's life by generation (how late a rollback came).
        var trialDeadlines: [Int: Double] = [:]
    }

    private let snapshot = Mutex(Snapshot())

    var current: Snapshot { snapshot.withLock { $0 } }

    func update(_ change: (inout Snapshot) -> Void) {
        snapshot.withLock { change(&$0) }
    }

    /// How the release a sync committed fared, for its receipt.
    func mark(for generation: Int) -> ReleaseMark {
        let snapshot = current
        if let record = snapshot.rolledBack[generation] {
            return ReleaseMark(generation: generation, state: "rolled-back", reason: record.reason.rawValue, deadline: nil)
        }
        if let trial = snapshot.state.trial, trial.generation == generation {
            return ReleaseMark(generation: generation, state: "trial", reason: nil, deadline: trial.deadline)
        }
        if snapshot.state.confirmed == generation {
            return ReleaseMark(generation: generation, state: "confirmed", reason: nil, deadline: nil)
        }
        // A newer release replaced it before its trial ended.
        return ReleaseMark(generation: generation, state: "superseded", reason: nil, deadline: nil)
    }
}

/// In a sync receipt: what became of the generation the sync committed.
package struct ReleaseMark: Sendable, Codable, Equatable {
    package var generation: Int
    /// `trial`, `confirmed`, `rolled-back` or `superseded`.
    package var state: String
    package var reason: String?
    package var deadline: Double?
}
