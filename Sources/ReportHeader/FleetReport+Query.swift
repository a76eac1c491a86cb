import RouteSync

/// The report in a URL (`--report-in query`), for CDN logs that keep no request headers (S3 server
/// access logs, CloudFront standard logs). A URL ends up in more places than a header: every
/// cache's and proxy's log on the way, the CDN's, whatever reads those. So it says less: the
/// device's hash, the release in force, its state, the one release it gave up last and the `why`
/// code — what `fleet` counts and `--halt-above` decides on — and never the host version (a list of
/// unpatched hosts in every log), older failed releases, the device id or anything a setting
/// could put a secret in. Same dictionary, same keys: the readers of the header read it as it is.
extension FleetReport {
    /// The query parameter the report goes in, percent-encoded.
    package static let queryParameter = "cenarius-report"
    /// At most one poll per window carries it, so that a CDN whose cache key includes the query
    /// string answers the others from its cache: the first poll of each hour.
    package static let queryWindow: Double = 3600
    /// The short form's bytes before percent-encoding.
    package static let maxQueryBytes = 160

    /// The short form, as `name=value` for a query string; nil when it does not fit.
    package func queryItem() -> String? {
        var short = self
        short.native = nil
        short.failed = Array(failed.prefix(1))
        guard let value = short.headerValue(), value.utf8.count <= Self.maxQueryBytes else { return nil }
        return Self.queryParameter + "=" + Remote.escape(value)
    }

    /// `url` with `item` added to its query string.
    package static func url(_ url: String, adding item: String) -> String {
        url + (url.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + item
    }
}
