import RouteSync
import CCurl

/// The few response headers cenariusd acts on. Package-visible for the fuzzer (FuzzResponseHeaders).
package struct ResponseHeaders {
    package var statusLine: String?
    package var status = 0
    /// At most `HeaderValue.maxValidatorBytes`; a longer one is dropped.
    package var etag: String?
    package var lastModified: String?
    /// Seconds, at most a day (`HeaderValue.retryAfter`).
    package var retryAfter: Double?
    /// In `ByteCount`'s range.
    package var contentLength: Int64?
    package var acceptRanges = false
    /// What a cache on the way says of the copy (`Age`, `Date`, `Cache-Control`), kept as
    /// evidence of how stale an edge may be (docs/why.md); each at most `HeaderValue.maxValidatorBytes`.
    package var age: String?
    package var date: String?
    package var cacheControl: String?
    /// `Cenarius-Growing`: a LAN peer serving a form it is still fetching itself, whose body may
    /// break off if its own download does (docs/peers.md).
    package var growing = false

    package init() {}

    /// One raw header line. Byte-wise, because it runs for every header of every file on the
    /// download loop: only the status line and the values of the fields above become Strings.
    package mutating func consume(_ raw: UnsafeRawBufferPointer) {
        var end = raw.count
        while end > 0, raw[end - 1] == 0x0A || raw[end - 1] == 0x0D { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: raw[0..<end])
        if line.starts(with: "HTTP/".utf8) {
            // A new response (after a redirect or a 100): forget the previous one's headers.
            self = ResponseHeaders()
            statusLine = String(decoding: line, as: UTF8.self)
            status = Self.statusCode(line)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
              let field = Field(name: UnsafeRawBufferPointer(rebasing: line[..<colon])) else { return }
        var first = colon + 1, last = line.count
        while first < last, line[first] == 0x20 || line[first] == 0x09 { first += 1 }
        while last > first, line[last - 1] == 0x20 || line[last - 1] == 0x09 { last -= 1 }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[first..<last]), as: UTF8.self)
        switch field {
        case .etag: etag = HeaderValue.validator(value)
        case .lastModified: lastModified = HeaderValue.validator(value)
        case .contentLength: contentLength = HeaderValue.contentLength(value)?.value
        case .acceptRanges: acceptRanges = value.lowercased() == "bytes"
        case .retryAfter: retryAfter = HeaderValue.retryAfter(value, now: FileSystem.now())?.value
        case .age: age = HeaderValue.validator(value)
        case .date: date = HeaderValue.validator(value)
        case .cacheControl: cacheControl = HeaderValue.validator(value)
        case .growing: growing = true
        }
    }

    /// The second word of the status line as a number; 0 when it is not one.
    static func statusCode(_ line: UnsafeRawBufferPointer) -> Int {
        guard var index = line.firstIndex(of: 0x20) else { return 0 }
        index += 1
        var code = 0
        let digitsStart = index
        while index < line.count, line[index] != 0x20 {
            let digit = Int(line[index]) - 0x30
            guard (0...9).contains(digit), index - digitsStart < 9 else { return 0 }
            code = code * 10 + digit
            index += 1
        }
        return index > digitsStart ? code : 0
    }

    enum Field: CaseIterable {
        case etag, lastModified, contentLength, acceptRanges, retryAfter, age, date, cacheControl, growing

        var lowercased: StaticString {
            switch self {
            case .etag: "etag"
            case .lastModified: "last-modified"
            case .contentLength: "content-length"
            case .acceptRanges: "accept-ranges"
            case .retryAfter: "retry-after"
            case .age: "age"
            case .date: "date"
            case .cacheControl: "cache-control"
            case .growing: "cenarius-growing"
            }
        }

        /// Matches a field name ASCII-case-insensitively.
        init?(name: UnsafeRawBufferPointer) {
            for field in Field.allCases {
                let expected = field.lowercased
                guard expected.utf8CodeUnitCount == name.count else { continue }
                let matches = expected.withUTF8Buffer { expected in
                    zip(expected, name).allSatisfy { e, b in
                        e >= 0x61 && e <= 0x7A ? b | 0x20 == e : b == e
                    }
                }
                if matches {
                    self = field
                    return
                }
            }
            return nil
        }
    }
}

/// Parses the HTTP-date form of `Retry-After` (RFC 9110 §10.2.3) with libcurl's own date parser.
enum HTTPDate {
    /// Unix seconds; nil when the text is not a date.
    static func unixTime(_ text: String) -> Double? {
        let when = ccurl_getdate(text)
        guard when >= 0 else { return nil }
        return Double(when)
    }
}
