/// The one error type every layer throws. Its `Code` is the contract's exit code, so the
/// command line, the JSON envelope and the tests agree on what went wrong.
package struct CenariusError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: Int32, Sendable, CaseIterable {
        case ok = 0
        case `internal` = 1
        case notFound = 2
        case remote = 3
        case integrity = 4
        case storage = 5
        case usage = 64

        /// The stable name used in JSON error envelopes.
        package var name: String {
            switch self {
            case .ok: "OK"
            case .internal: "INTERNAL"
            case .notFound: "NOT_FOUND"
            case .remote: "REMOTE"
            case .integrity: "INTEGRITY"
            case .storage: "STORAGE"
            case .usage: "USAGE"
            }
        }
    }

    /// Why, where code decides on it: callers match on this, never on the message's words, so
    /// that rewording a message cannot change behaviour.
    package enum Cause: Sendable, Equatable {
        /// The origin answered with this HTTP status.
        case httpStatus(Int)
        /// A `file://` remote has no such file.
        case missingFile
        /// Another process holds the cache's lock (its pid, when it wrote one).
        case locked(holder: Int32?)
        /// A POST to the daemon without its bearer token.
        case unauthorized
        /// The work was cancelled (graceful shutdown), not failed: nothing is wrong with the remote.
        case cancelled
        /// The origin answered, and the body broke off before its end.
        case cutShort
        /// No connection could be made (refused: nothing listens there, or not yet). Costs no time,
        /// so a LAN peer that refuses is not avoided for it (PeerHealth).
        case refused
        /// Another publisher wrote its lease over this one's after this one held the publish lock
        /// (a store without conditional writes): it stopped before the next write that names a
        /// release, and may wait for that one and publish again.
        case lockTaken
    }

    package var code: Code
    /// One line: what, where (uri, file, URL) and why.
    package var message: String
    /// Seconds the origin asked us to wait (`Retry-After` on 429/503), for the daemon's scheduler.
    package var retryAfter: Double?
    package var cause: Cause?
    /// The HTTP status the daemon's control API answers it with, where its code's is not the
    /// right one (a 409 for a confirmation that came too late, a 401 without the token); carried
    /// by the error as hummingbird's `HTTPError` does, so no endpoint patches a status of its own.
    package var httpStatus: Int?

    package init(_ code: Code, _ message: String, retryAfter: Double? = nil, cause: Cause? = nil) {
        self.code = code
        // Every message passes the one redaction: no URL credentials or header values (G11).
        self.message = Secrets.redact(message)
        self.retryAfter = retryAfter
        self.cause = cause
    }

    /// The same error, answered over HTTP with `status`.
    package func answering(_ status: Int) -> Self {
        var error = self
        error.httpStatus = status
        return error
    }

    /// The same error with more said at the end of its message.
    package func appending(_ text: String) -> Self {
        var error = self
        error.message += Secrets.redact(text)
        return error
    }

    package var description: String { message }

    package static func notFound(_ message: String) -> Self { .init(.notFound, message) }
    package static func remote(_ message: String) -> Self { .init(.remote, message) }
    package static func integrity(_ message: String) -> Self { .init(.integrity, message) }
    package static func storage(_ message: String) -> Self { .init(.storage, message) }
    package static func usage(_ message: String) -> Self { .init(.usage, message) }
    package static func `internal`(_ message: String) -> Self { .init(.internal, message) }
}

extension CenariusError {
    /// The remote has no such file (HTTP 404, or a `file://` path that does not exist): for the
    /// optional sidecars (signature, release manifest), whose absence is an answer, not a failure.
    package var isCancelled: Bool { cause == .cancelled }

    package var isMissingRemoteFile: Bool {
        cause == .httpStatus(404) || cause == .missingFile
    }

    /// A failure of this one file that another file of the same origin need not share: missing,
    /// refused (403, 410), an origin error (5xx), a body cut short or not what it claimed. Not a
    /// connection that could not be made, a proxy's 407, a 401 or 429: those the next request meets too.
    package var isThisFile: Bool {
        if code == .integrity { return true }
        switch cause {
        case .missingFile?, .cutShort?: return true
        case .httpStatus(let status)?: return [403, 404, 410].contains(status) || (500...599).contains(status) && status != 503
        default: return false
        }
    }
}
