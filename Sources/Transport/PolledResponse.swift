import RouteSync
/// What the origin (or a cache on the way) answered to a document request: kept by the sync for
/// the poll, as `why`'s evidence of what the origin served and how stale an edge may be.
package struct PolledResponse: Sendable, Codable, Equatable {
    /// The URL asked, without credentials (G11).
    package var url: String
    package var status: Int
    /// Unix seconds when the answer came.
    package var at: Double
    package var etag: String?
    package var lastModified: String?
    package var age: String?
    package var date: String?
    package var cacheControl: String?

    init(url: String, headers: ResponseHeaders, at: Double) {
        self.url = Secrets.redact(url)
        status = headers.status
        self.at = at
        etag = headers.etag
        lastModified = headers.lastModified
        age = headers.age
        date = headers.date
        cacheControl = headers.cacheControl
    }

    /// Until when a cache on the way may go on serving this copy without asking the origin:
    /// its lifetime less its age, from when it came. nil when the answer does not say.
    package var staleUntil: Double? {
        guard let maxAge = cacheControl.flatMap(HeaderValue.sharedMaxAge) else { return nil }
        return at + Double(max(0, maxAge - (age.flatMap(HeaderValue.age) ?? 0)))
    }
}
