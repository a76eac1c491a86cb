/// When the next periodic sync runs (G7), decided without I/O.
///
/// Successes: one sync per `interval`-long window, at a uniformly random moment inside it
/// (full jitter per window), so a fleet started together spreads out while each device still
/// syncs once per interval on average. Failures: exponential backoff from an eighth of the
/// interval up to the interval, with equal jitter, never sooner than the origin's `Retry-After`.
/// Proportional to the interval, so that a fleet in an outage sends at most about twice the
/// requests it sends in steady state (B7), whatever the interval; equal jitter (half fixed, half
/// random) so that no device retries at once after a failure. Once the backoff has reached the
/// interval, a retry comes at a random moment of an interval-long window around it (half to one
/// and a half intervals): a long outage then costs the origin what steady state does, and the
/// fleet comes back at its normal rate instead of a third above it.
package struct SyncSchedule: Sendable, Equatable {
    package var interval: Double
    package private(set) var failures = 0

    package init(interval: Double) {
        self.interval = interval
    }

    /// The longest wait after the `failures`-th failure in a row: interval/4, /2, then the interval.
    package func backoffCeiling(failures: Int) -> Double {
        min(interval, interval / 4 * Double(1 << min(max(failures, 1) - 1, 20)))
    }

    package enum Outcome: Sendable, Equatable {
        case success
        case failure(retryAfter: Double?)
    }

    /// Seconds from now to the next sync. `random` is uniform in [0, 1); `elapsedInWindow` is how
    /// far into the current window the finished sync happened.
    package mutating func delay(after outcome: Outcome, random: Double, elapsedInWindow: Double) -> Double {
        switch outcome {
        case .success:
            failures = 0
            // The rest of this window, then a random point in the next one.
            return max(0, interval - elapsedInWindow) + interval * random
        case .failure(let retryAfter):
            failures += 1
            let ceiling = backoffCeiling(failures: failures)
            let wait = ceiling < interval ? ceiling * (0.5 + 0.5 * random) : interval * (0.5 + random)
            return max(wait, retryAfter ?? 0)
        }
    }
}
