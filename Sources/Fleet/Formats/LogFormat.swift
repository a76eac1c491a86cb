import ReportHeader

/// What kind of access log a file is, told from its first lines, so that each file of a run may be
/// another CDN's.
package enum LogFormat: Sendable, Equatable {
    /// JSON lines (nginx's `log_format`, or a CDN's pipeline mapped to it) and OpenStack Swift
    /// proxy lines, told apart line by line as before.
    case lines
    /// Amazon S3 server access logs: space-separated, the time in brackets, the request line quoted.
    /// They keep no request headers: the report is the `cenarius-report` query parameter.
    case s3
    /// CloudFront standard logs (W3C extended, tab-separated), columns named by `#Fields:`: the
    /// columns of the date, the time (UTC) and the query string, which carries the report.
    case cloudFront(date: Int, time: Int, query: Int)
    /// CloudFront real-time logs: tab-separated, no header, the unix time first; the report in
    /// `cs-headers` or the query string, wherever the configuration put them.
    case cloudFrontRealtime

    /// The query parameter a device puts its report in, percent-encoded, for logs without headers.
    package static let queryParameter = FleetReport.queryParameter

    /// The format of a log whose first bytes are `head`.
    package static func detect(_ head: UnsafeRawBufferPointer) -> LogFormat {
        let text = String(decoding: head.prefix(64 << 10), as: UTF8.self)
        let lines = text.split(separator: "\n", maxSplits: 64, omittingEmptySubsequences: true)
        guard let first = lines.first else { return .lines }
        if first.hasPrefix("#Version:") || first.hasPrefix("#Fields:") {
            guard let fields = lines.prefix(while: { $0.hasPrefix("#") }).first(where: { $0.hasPrefix("#Fields:") }) else { return .lines }
            let names = fields.dropFirst("#Fields:".count).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let date = names.firstIndex(of: "date"), let time = names.firstIndex(of: "time"),
                  let query = names.firstIndex(of: "cs-uri-query") else { return .lines }
            return .cloudFront(date: date, time: time, query: query)
        }
        if let tab = first.utf8.firstIndex(of: UInt8(ascii: "\t")),
           Array(first.utf8[..<tab]).withUnsafeBytes({ RealtimeLine.time($0[...]) }) != nil {
            return .cloudFrontRealtime
        }
        // `79a59df9… awsexamplebucket1 [06/Feb/2019:00:00:38 +0000] 192.0.2.3 …`: the time, bracketed, is the third field.
        let bytes = Array(first.utf8)
        if let open = bytes.firstIndex(of: UInt8(ascii: "[")), open + 28 <= bytes.count, LogTime.s3(bytes[open..<(open + 28)]) != nil,
           bytes[..<open].split(separator: UInt8(ascii: " ")).count == 2 {
            return .s3
        }
        return .lines
    }
}
