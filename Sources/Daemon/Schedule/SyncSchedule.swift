/// When the next periodic sync runs (G7), decided without I/O.
///
/// Successes: one sync per `interval`-long window, at a uniformly random moment inside it
/// (full jitter per window), so a fleet started together spreads out while each device still
/// syncs once per interval on average. Failures: exponential backoff with full jitter, capped
/// at the interval, and never sooner than the origin's `Retry-After`.
public struct SyncSchedule: Sendable, Equatable {
    public var interval: Double
    public var backoffBase: Double
    public private(set) var failures = 0

    public init(interval: Double, backoffBase: Double = 5) {
        self.interval = interval
        self.backoffBase = backoffBase
    }

    public enum Outcome: Sendable, Equatable {
        case success
        case failure(retryAfter: Double?)
    }

    /// Seconds from now to the next sync. `random` is uniform in [0, 1); `elapsedInWindow` is how
    /// far into the current window the finished sync happened.
    public mutating func delay(after outcome: Outcome, random: Double, elapsedInWindow: Double) -> Double {
        switch outcome {
        case .success:
            failures = 0
            // The rest of this window, then a random point in the next one.
            return max(0, interval - elapsedInWindow) + interval * random
        case .failure(let retryAfter):
            failures += 1
            let ceiling = min(interval, backoffBase * Double(1 << min(failures - 1, 20)))
            return max(ceiling * random, retryAfter ?? 0)
        }
    }
}
