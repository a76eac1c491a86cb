import RouteSync
/// What a failed form leads to (B8), beside RetryPolicy's answer for plain files: a form is
/// downloaded once, and any failure of it (an HTTP error or 404, a broken connection, the wrong
/// bytes, a frame that does not decode, decodes past its limit or to the wrong hash) moves the
/// file to its next source at once. Retrying a form would spend the round trips the form was
/// meant to save; the plain file, always last, keeps the full retry policy and is the only
/// source whose failure fails a sync. The pack is large: a body that breaks off resumes by Range
/// (what has arrived is not fetched again), but nothing else about it is tried twice either.
package struct FormPolicy: Sendable {
    package enum Decision: Sendable, Equatable {
        /// Try the file's next source.
        case next
        /// No source is left (the plain file itself failed): the sync fails as it did before.
        case giveUp
    }

    package init() {}

    /// The retry policy form downloads run under: one attempt, no waiting.
    package func downloads(_ options: TransferOptions) -> RetryPolicy {
        var policy = RetryPolicy(options)
        policy.attempts = 1
        return policy
    }

    /// The policy of a pack: the files' attempts, spent only on resuming a body that broke off.
    package func packs(_ options: TransferOptions) -> RetryPolicy {
        var policy = RetryPolicy(options)
        policy.resumesOnly = true
        return policy
    }

    /// After a source failed, with `remaining` sources left after it.
    package func decide(remaining: Int) -> Decision {
        remaining > 0 ? .next : .giveUp
    }
}
