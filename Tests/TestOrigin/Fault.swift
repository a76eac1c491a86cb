/// What the test origin does wrong on purpose, per path.
public enum Fault: Sendable, Equatable {
    /// Answer with this status (and `Retry-After` when given), empty body.
    case status(Int, retryAfter: String? = nil)
    /// Send the headers and half the body, then close the connection.
    case truncate
    /// Send the headers and half the body, wait this many seconds, then the rest (as a slow link
    /// does), or close the connection instead with `thenCut`.
    case halfway(pause: Double, thenCut: Bool = false)
    /// Send the full length, but with bytes flipped.
    case corrupt
    /// Wait this many seconds before answering.
    case delay(Double)
    /// Close the connection without answering.
    case drop
    /// Send headers and a trickle: one byte, then nothing, keeping the connection open.
    case stall
    /// Answer 200 with no Content-Length and keep sending until the client gives up.
    case endless
    /// Send the body chunked, with a Content-Length header that understates it (a misconfigured
    /// server): HTTP says the chunked encoding wins, so the whole body arrives.
    case chunkedUnderstated
    /// Redirect (302) to this location.
    case redirect(String)
    /// Serve the file as usual, but with this `ETag` (and no `Last-Modified`).
    case etag(String)
    /// Serve the file as usual, as a cache on the way would: with `Age` and `Cache-Control: max-age`.
    case cached(age: Int, maxAge: Int)
    /// Serve the whole file with 200 to a Range request, as a server without range support does.
    case ignoresRanges
}
