#if canImport(Glibc)
import Glibc
#endif

/// The little of XML an S3 answer needs: the text of named elements. S3's listings and errors
/// are flat documents of known elements without attributes that matter, so a scanner for
/// `<Name>text</Name>` reads them whole; a full XML parser would be Foundation's (megabytes of
/// start-up and binary) for no case this one misses (docs/decisions.md).
enum XMLText {
    /// The text of every `<tag>…</tag>` in `bytes`, in order, entities decoded.
    static func all(_ tag: String, in bytes: [UInt8]) -> [String] {
        blocks(tag, in: bytes[...]).map { decode($0) }
    }

    static func first(_ tag: String, in bytes: [UInt8]) -> String? {
        blocks(tag, in: bytes[...]).first.map { decode($0) }
    }

    /// The raw contents of every `<tag>…</tag>`: nested elements stay inside (a listing's `<Contents>`).
    static func blocks(_ tag: String, in bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        let open = Array("<\(tag)>".utf8)
        let close = Array("</\(tag)>".utf8)
        var found: [ArraySlice<UInt8>] = []
        var position = bytes.startIndex
        while let start = find(open, in: bytes, from: position) {
            let contents = start + open.count
            guard let end = find(close, in: bytes, from: contents) else { break }
            found.append(bytes[contents..<end])
            position = end + close.count
        }
        return found
    }

    static func text(_ tag: String, in block: ArraySlice<UInt8>) -> String? {
        blocks(tag, in: block).first.map { decode($0) }
    }

    private static func find(_ needle: [UInt8], in bytes: ArraySlice<UInt8>, from: Int) -> Int? {
        guard let first = needle.first, bytes.endIndex - from >= needle.count else { return nil }
        var index = from
        while index + needle.count <= bytes.endIndex {
            if bytes[index] == first, bytes[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric references.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semicolon) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let name = rest[rest.index(after: amp)..<semicolon]
            switch name {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
                if let scalar = number.flatMap(Unicode.Scalar.init) { out.unicodeScalars.append(scalar) } else { out += "&" + name + ";" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return out + rest
    }

    /// S3's `2026-11-26T03:10:00.000Z` as unix seconds (nil when it is not one).
    static func time(_ text: String) -> Double? {
        let digits = text.utf8.map { Int($0) - 48 }
        guard digits.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                guard (0...9).contains(digits[i]) else { return nil }
                value = value * 10 + digits[i]
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Double(timegm(&parts))
    }
}
