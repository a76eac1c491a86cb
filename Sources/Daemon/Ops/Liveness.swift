import RouteSync
import Synchronization

/// Whether the sync scheduler still comes round, for the systemd watchdog (docs/service.md): a
/// timer that fired long after it was due, or a sync that shows no progress far longer than the
/// transport lets a request wait, means the scheduler is stuck and the daemon should be restarted.
/// A sync shows progress while its transfers run (the downloader reports ten times a second even
/// while bytes are slow: libcurl's own stall limit ends those), and at its start.
package final class Liveness: Sendable {
    private struct State {
        /// The scheduler waits for its timer, due then (monotonic seconds).
        var dueAt: Double?
        /// A sync runs; when it last showed progress.
        var lastProgress: Double?
    }

    private let state = Mutex(State())
    /// Seconds a sync may show no progress, and a timer may be overdue, before the scheduler is stuck.
    package let stallLimit: Double

    package init(stallLimit: Double) {
        self.stallLimit = stallLimit
    }

    /// For a daemon with `--timeout` seconds per request, watched every `period` seconds: four
    /// request timeouts (a table, its sidecar, a manifest, a file) and a few periods more.
    package convenience init(timeout: Int, period: Double) {
        self.init(stallLimit: 4 * Double(timeout) + 3 * period)
    }

    /// The scheduler waits for a timer due in `delay` seconds; `woke` when it stops waiting.
    func waiting(for delay: Double) { state.withLock { $0.dueAt = FileSystem.monotonic() + delay } }
    func woke() { state.withLock { $0.dueAt = nil } }
    /// A sync shows progress (its start counts as some), then ends.
    func progressed() { state.withLock { $0.lastProgress = FileSystem.monotonic() } }
    func synced() { state.withLock { $0.lastProgress = nil } }

    /// Why the scheduler looks stuck at `now` (monotonic seconds); nil while it comes round.
    package func stuck(now: Double = FileSystem.monotonic()) -> String? {
        state.withLock { state in
            if let last = state.lastProgress, now - last > stallLimit {
                return "a sync has shown no progress for \(Whole.text((now - last).rounded())) s"
            }
            if let due = state.dueAt, now - due > stallLimit {
                return "the scheduler's timer is \(Whole.text((now - due).rounded())) s overdue"
            }
            return nil
        }
    }
}
