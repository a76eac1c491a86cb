import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

/// The conditional request headers of RFC 9110 §13.2.2, evaluated in its order: `If-Match`, else
/// `If-Unmodified-Since`; then `If-None-Match`, else `If-Modified-Since`; then `If-Range`, which
/// decides whether `Range` is honoured. Chromium sends `Range` with `If-None-Match` for partly
/// cached media: a matching `If-None-Match` answers 304 before any Range is looked at.
enum Preconditions {
    enum Outcome: Equatable {
        /// 412: an `If-Match` or `If-Unmodified-Since` failed (or `If-None-Match` matched on a write).
        case failed
        /// 304.
        case notModified
        /// Go on; honour `Range` only when `rangeAllowed`.
        case proceed(rangeAllowed: Bool)
    }

    /// `etag`: the representation's own validator (weak ones begin with `W/`); `lastModified`:
    /// seconds since 1970, nil when unknown.
    static func evaluate(_ request: HTTPHeaders, method: HTTPMethod, etag: String, lastModified: Int?) -> Outcome {
        let readOnly = method == .GET || method == .HEAD
        if let ifMatch = request.first(name: "if-match") {
            if !matches(ifMatch, etag, weak: false) { return .failed }
        } else if let since = request.first(name: "if-unmodified-since").flatMap(parseDate), let lastModified, lastModified > since {
            return .failed
        }
        if let ifNoneMatch = request.first(name: "if-none-match") {
            if matches(ifNoneMatch, etag, weak: true) { return readOnly ? .notModified : .failed }
        } else if readOnly, let since = request.first(name: "if-modified-since").flatMap(parseDate), let lastModified, lastModified <= since {
            return .notModified
        }
        guard method == .GET, request.contains(name: "range") else { return .proceed(rangeAllowed: false) }
        guard let ifRange = request.first(name: "if-range") else { return .proceed(rangeAllowed: true) }
        // If-Range takes a strong validator: an entity tag compared strongly, or an exact date.
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") { return .proceed(rangeAllowed: matches(ifRange, etag, weak: false)) }
        if let date = parseDate(ifRange), let lastModified { return .proceed(rangeAllowed: date == lastModified) }
        return .proceed(rangeAllowed: false)
    }

    /// Whether a list of entity tags (or `*`) names `etag`. Weak comparison ignores `W/`; strong
    /// comparison needs both tags strong and equal.
    static func matches(_ header: String, _ etag: String, weak: Bool) -> Bool {
        let own = etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
        for candidate in header.split(separator: ",") {
            let tag = candidate.trimmingCharacters(in: " ")
            if tag == "*" { return true }
            if weak {
                if (tag.hasPrefix("W/") ? tag.dropFirst(2) : tag) == own { return true }
            } else if !tag.hasPrefix("W/") && !etag.hasPrefix("W/") && tag == own {
                return true
            }
        }
        return false
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) as seconds since 1970; nil for anything
    /// else, which makes the header count as absent (RFC 9110 §13.1.3).
    static func parseDate(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT": fixed positions.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[25...] == Array(" GMT".utf8)[...] else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
              let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
              let second = number(23..<25), bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":") else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int(timegm(&parts))
    }
}
