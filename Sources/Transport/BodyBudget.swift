import RouteSync
import Synchronization

/// Memory for bodies held whole instead of written as they arrive: growing in a transfer's
/// buffer, or handed to the hash worker, which writes and hashes them from memory. When the
/// budget is spent the loop writes bodies to their files itself, so a worker falling behind
/// costs time rather than memory (B1's RSS bar).
final class BodyBudget: Sendable {
    private let held = Mutex(0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes `bytes` of the budget if they are there.
    func reserve(_ bytes: Int) -> Bool {
        held.withLock { held in
            guard held + bytes <= limit else { return false }
            held += bytes
            return true
        }
    }

    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        held.withLock { $0 -= bytes }
    }
}
