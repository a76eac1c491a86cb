package import RouteSync
/// What happened to one attempt at a transfer, reduced to what the retry decision needs.
package enum AttemptFailure: Sendable, Equatable {
    /// Connection refused/reset, timeouts, truncated or corrupt bodies: worth another try.
    case transient(CenariusError)
    /// 429 or 503, with the server's `Retry-After` in seconds when it gave one.
    case throttled(String, retryAfter: Double?)
    /// Any other HTTP error, bad content, too large: trying again will not help.
    case permanent(CenariusError)
}

/// Pure retry decisions: exponential backoff with full jitter, `Retry-After` honoured (G7).
package struct RetryPolicy: Sendable {
    package var attempts: Int
    package var base: Double
    package var cap: Double
    package var maxRetryAfter: Double
    /// Only a body cut short is tried again, from where it broke (Range), and a throttled origin
    /// waited for: a form's pack (FormPolicy).
    package var resumesOnly = false

    package init(attempts: Int, base: Double, cap: Double, maxRetryAfter: Double) {
        self.attempts = attempts
        self.base = base
        self.cap = cap
        self.maxRetryAfter = maxRetryAfter
    }

    package init(_ options: TransferOptions) {
        self.init(attempts: options.attempts, base: options.backoffBase, cap: options.backoffCap, maxRetryAfter: options.maxRetryAfter)
    }

    package enum Decision: Sendable, Equatable {
        case retry(after: Double)
        case giveUp(CenariusError)
    }

    /// `attempt` counts from 1 (the attempt that just failed); `random` is in [0, 1). `resumable`:
    /// the attempt broke off in a body that a Range request can continue.
    package func decide(_ failure: AttemptFailure, attempt: Int, random: Double, resumable: Bool = false) -> Decision {
        // The origin asking to wait (429, 503) is honoured still: giving up would send every
        // file of the pack through a request of its own to the same throttled origin.
        if resumesOnly, !resumable, case .transient(let error) = failure { return .giveUp(error) }
        switch failure {
        case .permanent(let error):
            return .giveUp(error)
        case .transient(let error):
            guard attempt < attempts else { return .giveUp(error.appending(" (after \(attempt) attempts)")) }
            return .retry(after: backoff(attempt: attempt, random: random))
        case .throttled(let message, let retryAfter):
            guard attempt < attempts else { return .giveUp(.init(.remote, "\(message) (after \(attempt) attempts)", retryAfter: retryAfter)) }
            if let retryAfter {
                guard retryAfter <= maxRetryAfter else {
                    return .giveUp(.init(.remote, "\(message); Retry-After \(Whole.text(retryAfter.rounded())) s is longer than this run waits", retryAfter: retryAfter))
                }
                return .retry(after: retryAfter)
            }
            return .retry(after: backoff(attempt: attempt, random: random))
        }
    }

    /// Full jitter: uniform in [0, min(cap, base·2^(attempt-1))].
    package func backoff(attempt: Int, random: Double) -> Double {
        let ceiling = min(cap, base * Double(1 << min(attempt - 1, 30)))
        return ceiling * random
    }
}
