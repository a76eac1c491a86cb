import RouteSync

/// CloudFront real-time logs (Kinesis records, as Firehose writes them to files): tab-separated
/// fields in the order the real-time log configuration lists them, no header line, `timestamp`
/// (unix seconds with milliseconds) first. The report is in `cs-headers` (the request's headers,
/// percent-encoded, `Name:value` one a line) when the configuration has it, else the `cenarius-report`
/// parameter of `cs-uri-query`; whichever field holds it, it is found by its name.
enum RealtimeLine {
    /// `1764000000.123`: how a real-time record starts (the detection of the format too).
    static func time(_ field: Slice<UnsafeRawBufferPointer>) -> Double? {
        guard (11...17).contains(field.count), let dot = field.firstIndex(of: UInt8(ascii: ".")), dot - field.startIndex == 10,
              field.allSatisfy({ ($0 &- UInt8(ascii: "0")) < 10 || $0 == UInt8(ascii: ".") }) else { return nil }
        return Double(String(decoding: field, as: UTF8.self))
    }

    static func read(_ line: UnsafeRawBufferPointer) -> (time: Double, report: [UInt8])? {
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
        guard fields.count > 1, let time = time(fields[0]) else { return nil }
        for field in fields.dropFirst() {
            if let header = header(in: field) { return (time, header) }
        }
        for field in fields.dropFirst() {
            if let query = QueryReport.report(inQuery: field), !query.isEmpty { return (time, query) }
        }
        return (time, [])
    }

    /// The `Cenarius-Report` line of a `cs-headers` field (any case), percent-decoded.
    private static func header(in field: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        guard let decoded = URIPath.percentDecoded(Array(field)) else { return nil }
        let name = Array("cenarius-report:".utf8)
        var start = 0
        while start + name.count <= decoded.count {
            if start == 0 || decoded[start - 1] == UInt8(ascii: "\n"),
               zip(decoded[start..<(start + name.count)], name).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) {
                let value = decoded[(start + name.count)...].prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
                return Array(value.drop { $0 == UInt8(ascii: " ") })
            }
            start += 1
        }
        return nil
    }
}
