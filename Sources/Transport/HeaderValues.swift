package import RouteSync
/// The response header values a sync acts on, checked at the edge (G5): whatever the origin
/// sends, what comes out is in range or nil.
package enum HeaderValue {
    /// The longest `ETag` or `Last-Modified` kept. Real ones are tens of bytes; a longer one is
    /// not stored, so the next poll is unconditional rather than refused (431) forever.
    package static let maxValidatorBytes = 4096

    /// The longest `Retry-After` honoured: a day. A longer one is clamped to it, so a typo on
    /// the origin side cannot silence a device for years.
    package static let maxRetryAfter = Seconds.day

    /// An `ETag` or `Last-Modified` value; nil when empty, longer than `maxValidatorBytes` or
    /// holding a control character (one read back from a damaged cache file must not split the
    /// request's headers).
    package static func validator(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= maxValidatorBytes,
              text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else { return nil }
        return text
    }

    /// `Content-Length`: 1*DIGIT (RFC 9110 §8.6); nil for anything else or past `ByteCount.limit`.
    package static func contentLength(_ text: String) -> ByteCount? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let value = Int64(text) else { return nil }
        return ByteCount(exactly: value)
    }

    /// `Age` (RFC 9111 §5.1: delta-seconds); nil for anything else.
    package static func age(_ text: String) -> Int? {
        deltaSeconds(text)
    }

    /// The freshness lifetime a shared cache gives a response: `s-maxage`, else `max-age`
    /// (RFC 9111 §4.2.1) of a `Cache-Control` value; nil when neither is there.
    package static func sharedMaxAge(_ cacheControl: String) -> Int? {
        var maxAge: Int?
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { part in
                String(part.filter { $0 != " " && $0 != "\t" && $0 != "\"" }).lowercased()
            }
            guard parts.count == 2, let seconds = deltaSeconds(parts[1]) else { continue }
            if parts[0] == "s-maxage" { return seconds }
            if parts[0] == "max-age" { maxAge = seconds }
        }
        return maxAge
    }

    /// 1*DIGIT, at most ten of them (past a century: a value no cache keeps).
    private static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// `Retry-After` in seconds from `now`: delay-seconds (1*DIGIT, any length) or an HTTP-date
    /// (RFC 9110 §10.2.3), clamped to `maxRetryAfter`. nil for anything else (a sign, an
    /// exponent, text): the sync's own backoff applies then. A date in the past is 0.
    package static func retryAfter(_ text: String, now: Double) -> Seconds? {
        if let first = text.utf8.first, first >= 0x30, first <= 0x39 {
            guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            // Twenty digits do not fit any integer type; past the ceiling they all mean "a day".
            guard text.utf8.count <= 9, let seconds = Int64(text), let value = Seconds(exactly: seconds) else { return maxRetryAfter }
            return min(value, maxRetryAfter)
        }
        guard text.utf8.count <= 64, let when = HTTPDate.unixTime(text) else { return nil }
        return Seconds(exactly: min(max(0, when - now), maxRetryAfter.value))
    }
}
