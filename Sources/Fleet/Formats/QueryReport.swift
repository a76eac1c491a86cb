import RouteSync

/// The lines of logs that keep no request headers (S3 server access logs, CloudFront standard
/// logs): the time, and the report a device put in the query string (`cenarius-report=`,
/// percent-encoded), or an empty report when the request carries none.
enum QueryReport {
    /// An S3 server access log line: `owner bucket [time] ip requester id operation key "GET /k?q HTTP/1.1" …`.
    static func s3(_ line: UnsafeRawBufferPointer) -> (time: Double, report: [UInt8])? {
        let bytes = line
        guard let open = bytes.firstIndex(of: UInt8(ascii: "[")), open + 28 <= bytes.count,
              let time = LogTime.s3(ArraySlice(bytes[open..<(open + 28)])) else { return nil }
        // The request line: the first quoted field after the time.
        guard let quote = bytes[(open + 28)...].firstIndex(of: UInt8(ascii: "\"")),
              let end = bytes[(quote + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let request = bytes[(quote + 1)..<end]
        // `METHOD target PROTOCOL`; `-` when S3 logged none.
        let parts = request.split(separator: UInt8(ascii: " "))
        guard parts.count >= 2 else { return (time, []) }
        guard let report = report(inTarget: parts[1]) else { return nil }
        return (time, report)
    }

    /// A CloudFront standard log line (tab-separated, columns as its file's `#Fields:` named them).
    static func cloudFront(_ line: UnsafeRawBufferPointer, date: Int, time: Int, query: Int) -> (time: Double, report: [UInt8])? {
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
        guard fields.count > max(date, time, query),
              let seconds = LogTime.w3c(date: ArraySlice(fields[date]), time: ArraySlice(fields[time])) else { return nil }
        guard let report = report(inQuery: fields[query]) else { return nil }
        return (seconds, report)
    }

    /// The report in a request target (`/path?a=b&cenarius-report=…`).
    private static func report(inTarget target: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        guard let mark = target.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        return report(inQuery: target[(mark + 1)...])
    }

    /// The `cenarius-report` parameter of a query string, percent-decoded; empty when there is none
    /// (`-` is CloudFront's empty query); nil when its escapes are broken (a malformed line).
    static func report(inQuery query: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        let name = Array((LogFormat.queryParameter + "=").utf8)
        for parameter in query.split(separator: UInt8(ascii: "&")) where parameter.starts(with: name) {
            guard let once = URIPath.percentDecoded(Array(parameter.dropFirst(name.count))) else { return nil }
            // A log that escapes `%` again (`device%253D…`) is decoded twice: a report starts `device=`.
            return once.starts(with: "device%".utf8) ? URIPath.percentDecoded(once) : once
        }
        return []
    }
}
