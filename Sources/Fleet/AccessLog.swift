package import RouteSync
import CPlatform

/// Access logs as JSON lines with `time` (unix seconds, a number or nginx's `$msec` string) and
/// `report` (the `Cenarius-Report` header as received), plain or gzip-rotated, read in chunks so
/// that memory does not grow with the log.
package enum AccessLog {
    /// One line's fields; nil for a line that is not such an object (counted, skipped).
    package static func parseLine(_ line: ArraySlice<UInt8>) -> (time: Double, report: String)? {
        if let fast = scan(line) { return fast }
        if line.first != UInt8(ascii: "{") { return swiftProxy(line) }
        guard let json = try? JSONValue.parse(Array(line), source: "log line") else { return nil }
        guard let report = json["report"]?.string else { return logpush(json) }
        let time: Double?
        switch json["time"] {
        case .string(let text)?: time = Double(text)
        case let value?: time = value.double
        case nil: time = nil
        }
        guard let time, time.isFinite, time >= 0 else { return nil }
        return (time, report)
    }

    /// A Cloudflare Logpush line (`http_requests`): `EdgeStartTimestamp` (unix seconds, milli-, micro-
    /// or nanoseconds, or RFC 3339), the header as a custom field of `RequestHeaders` (names lower-case),
    /// else the `cenarius-report` parameter of `ClientRequestURI`; an empty report when neither is there.
    static func logpush(_ json: JSONValue) -> (time: Double, report: String)? {
        let time: Double?
        switch json["EdgeStartTimestamp"] {
        case .string(let text)?:
            let bytes = Array(text.utf8)
            time = Double(text) ?? (bytes.count >= 19 && bytes[10] == UInt8(ascii: "T") ? LogTime.w3c(date: bytes[0..<10], time: bytes[11..<19]) : nil)
        case let value?:
            // By its size: 1.7e9 seconds, 1.7e12 milliseconds, 1.7e15 microseconds, 1.7e18 nanoseconds.
            time = value.double.map { var seconds = $0; while seconds > 1e11 { seconds /= 1000 }; return seconds }
        case nil: time = nil
        }
        guard let time, time.isFinite, time >= 0 else { return nil }
        if case .object(let headers)? = json["RequestHeaders"],
           let value = headers.first(where: { $0.key.lowercased() == "cenarius-report" })?.value.string {
            return (time, value)
        }
        guard let uri = json["ClientRequestURI"]?.string else { return nil }
        let report = Array(uri.utf8).withUnsafeBytes { target in
            target.firstIndex(of: UInt8(ascii: "?")).flatMap { QueryReport.report(inQuery: target[($0 + 1)...]) } ?? []
        }
        return (time, String(decoding: report, as: UTF8.self))
    }

    /// The shape nginx writes (`{"time":"1732500000.123","report":"..."}`), read without building a
    /// JSON tree: a day of a CDN's log is millions of lines. Anything else — other key order, escapes
    /// beyond `\"` and `\\`, spaces — is left to the full parser.
    static func scan(_ line: ArraySlice<UInt8>) -> (time: Double, report: String)? {
        guard let timeStart = find(Array(#""time":"#.utf8), in: line), let reportStart = find(Array(#""report":""#.utf8), in: line) else { return nil }
        var index = timeStart
        if index < line.endIndex, line[index] == UInt8(ascii: "\"") { index += 1 }
        let digits = index
        while index < line.endIndex, (48...57).contains(line[index]) || line[index] == UInt8(ascii: ".") { index += 1 }
        guard index > digits, index - digits <= 24, let time = Double(String(decoding: line[digits..<index], as: UTF8.self)) else { return nil }
        var report: [UInt8] = []
        index = reportStart
        while index < line.endIndex {
            let byte = line[index]
            if byte == UInt8(ascii: "\"") { return (time, String(decoding: report, as: UTF8.self)) }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < line.endIndex, line[index] == UInt8(ascii: "\"") || line[index] == UInt8(ascii: "\\") else { return nil }
            }
            report.append(line[index])
            index += 1
        }
        return nil
    }

    /// An OpenStack Swift proxy's line (its `proxy-logging` with `access_log_headers_only =
    /// Cenarius-Report`, docs/fleet.md): space-separated fields, the logged headers in one field as
    /// `Name:%20value%0AName:%20value` (percent-encoded), and the request's start as unix seconds
    /// among the fields after it.
    static func swiftProxy(_ line: ArraySlice<UInt8>) -> (time: Double, report: String)? {
        let fields = line.split(separator: UInt8(ascii: " "))
        let marker = Array("Cenarius-Report:".utf8)
        guard let at = fields.firstIndex(where: { $0.starts(with: marker) || find(Array("%0ACenarius-Report:".utf8), in: $0) != nil }) else { return nil }
        let text = String(decoding: fields[at], as: UTF8.self)
        guard let part = text.split(separator: "%0A").first(where: { $0.hasPrefix("Cenarius-Report:") }),
              let report = URIPath.percentDecoded(part.dropFirst("Cenarius-Report:".count)) else { return nil }
        guard let time = fields[(at + 1)...].lazy.compactMap({ Double(String(decoding: $0, as: UTF8.self)) }).first(where: { $0 > 1e9 && $0.isFinite }) else { return nil }
        return (time, String(report.trimmingPrefix(while: { $0 == " " })))
    }

    /// The index just past the first occurrence of `needle` in `line`.
    private static func find(_ needle: [UInt8], in line: ArraySlice<UInt8>) -> Int? {
        guard line.count >= needle.count else { return nil }
        var start = line.startIndex
        while start <= line.endIndex - needle.count {
            if line[start] == needle[0], line[start..<(start + needle.count)].elementsEqual(needle) { return start + needle.count }
            start += 1
        }
        return nil
    }

    /// Calls `body` with every line of the file at `path` (without its newline). A line longer than
    /// `maxLine` bytes is passed as an empty slice (a malformed line) and the rest of it skipped.
    package static func forEachLine(
        of path: String, maxLine: Int = 64 << 10, _ body: (ArraySlice<UInt8>) -> Void
    ) throws(CenariusError) {
        guard let file = cplatform_gzopen(path) else { throw .storage("cannot read \(path): \(FileSystem.errnoText())") }
        defer { cplatform_gzclose(file) }
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        var pending: [UInt8] = []
        var overlong = false
        while true {
            let count = chunk.withUnsafeMutableBytes { Int(cplatform_gzread(file, $0.baseAddress, UInt32($0.count))) }
            if count < 0 { throw .storage("cannot read \(path): \(String(cString: cplatform_gzerror(file)))") }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                if overlong {
                    overlong = false
                } else if pending.isEmpty {
                    body(chunk[start..<index])
                } else {
                    pending += chunk[start..<index]
                    body(pending[...])
                    pending.removeAll(keepingCapacity: true)
                }
                start = index + 1
            }
            if !overlong { pending += chunk[start..<count] }
            if pending.count > maxLine {
                body([])
                pending.removeAll(keepingCapacity: true)
                overlong = true
            }
        }
        if !pending.isEmpty && !overlong { body(pending[...]) }
    }
}
