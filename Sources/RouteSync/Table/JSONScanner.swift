/// A small strict JSON reader over UTF-8 bytes, enough for route tables and sidecars.
///
/// Route tables are read on every `resolve` (B4) and on every changed sync (B2), with
/// 20,000 entries and more; a byte scanner that builds no intermediate tree keeps that
/// well under a millisecond per thousand entries. It is also the parser the fuzzers hit.
struct JSONScanner: ~Copyable {
    struct Failure: Error {
        let offset: Int
        let reason: String
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var offset = 0
    private var depth = 0
    static let maxDepth = 64

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset >= bytes.count }

    /// The bytes consumed since `start`, without surrounding whitespace.
    func rawText(from start: Int) -> String {
        var from = start
        while from < offset, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[from]) { from += 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<offset]), as: UTF8.self)
    }

    mutating func fail(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    mutating func skipByteOrderMark() {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { offset = 3 }
    }

    /// Consumes `byte` after optional whitespace; false (nothing consumed) if another byte is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == byte {
            offset += 1
            return true
        }
        return false
    }

    mutating func expect(_ byte: UInt8) throws(Failure) {
        guard consume(byte) else { throw fail("expected '\(Character(UnicodeScalar(byte)))'") }
    }

    mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < bytes.count ? bytes[offset] : nil
    }

    /// Iterates the members of an array; `body` must consume exactly one value.
    mutating func array(_ body: (inout JSONScanner) throws(Failure) -> Void) throws(Failure) {
        try expect(UInt8(ascii: "["))
        try enter()
        if consume(UInt8(ascii: "]")) { depth -= 1; return }
        repeat {
            try body(&self)
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        depth -= 1
    }

    /// Iterates the members of an object; `body` gets the key and must consume the value.
    mutating func object(_ body: (inout JSONScanner, String) throws(Failure) -> Void) throws(Failure) {
        try expect(UInt8(ascii: "{"))
        try enter()
        if consume(UInt8(ascii: "}")) { depth -= 1; return }
        repeat {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
        depth -= 1
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        if depth > JSONScanner.maxDepth { throw fail("nested deeper than \(JSONScanner.maxDepth)") }
    }

    mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
        // Fast path: no escapes, the bytes are the string.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                offset += 1
                // ASCII (nearly every uri and hash) is valid UTF-8 as it is; only the rest is validated.
                if !slice.contains(where: { $0 >= 0x80 }) { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw fail("string is not UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            offset += 1
        }
        var out = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: out, as: UTF8.self) else { throw fail("string is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                try unescape(into: &out)
            case 0..<0x20:
                throw fail("control character in string")
            default:
                out.append(byte)
            }
        }
        throw fail("unterminated string")
    }

    private mutating func unescape(into out: inout [UInt8]) throws(Failure) {
        guard offset < bytes.count else { throw fail("unterminated escape") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                    throw fail("lone surrogate")
                }
                offset += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw fail("lone surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw fail("lone surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
            out.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw fail("invalid escape")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = URIPath.hexValue(bytes[offset]) else { throw fail("invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    /// A non-negative integer that fits in Int64 (sizes, versions).
    mutating func integer() throws(Failure) -> Int64 {
        skipWhitespace()
        var value: Int64 = 0
        let start = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(Int64(bytes[offset] - UInt8(ascii: "0")))
            if o1 || o2 { throw fail("number too large") }
            value = plus
            offset += 1
        }
        if offset == start { throw fail("expected a non-negative integer") }
        if offset < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[offset]) {
            throw fail("expected an integer")
        }
        return value
    }

    /// Skips any one JSON value (forward compatibility: unknown keys are ignored, but must be valid JSON).
    mutating func skipValue() throws(Failure) {
        guard let next = peek() else { throw fail("unexpected end") }
        switch next {
        case UInt8(ascii: "{"): try object { s, _ throws(Failure) in try s.skipValue() }
        case UInt8(ascii: "["): try array { s throws(Failure) in try s.skipValue() }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw fail("unexpected end") }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        for i in 0..<count where bytes[offset + i] != expected[i] { throw fail("invalid literal") }
        offset += count
    }

    private mutating func number() throws(Failure) {
        let start = offset
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        func digits(_ s: inout JSONScanner) -> Int {
            let begin = s.offset
            while s.offset < s.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(s.bytes[s.offset]) { s.offset += 1 }
            return s.offset - begin
        }
        if digits(&self) == 0 { throw fail("invalid number") }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            if digits(&self) == 0 { throw fail("invalid number") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            if digits(&self) == 0 { throw fail("invalid number") }
        }
        if offset - start > 400 { throw fail("number too long") }
    }
}
