#if canImport(Glibc)
import Glibc
#endif

/// The nginx JSON line (`{"time":"$msec","report":"$http_cenarius_report"}`), read as
/// `AccessLog.scan` reads it but on raw bytes, with no allocation: the first `"time":` (a quote
/// after it allowed) followed by `[0-9.]{1,24}`, and the first `"report":"` up to its closing quote,
/// with nginx's `\"` and `\\` escapes undone into `scratch`. Anything else (other escapes, a time
/// the fast path cannot read) is nil, and the line goes to `AccessLog.parseLine`, whose answer is
/// the reference: this is a shortcut to the same result, never a second opinion.
package enum NginxLine {
    // StaticStrings, not arrays: a global array is a lazy global, checked on every line.
    private static let timeKey: StaticString = #""time":"#
    private static let reportKey: StaticString = #""report":""#
    /// `","report":"`, the 12 bytes between nginx's time and report, as two little-endian words.
    private static let middle: (UInt64, UInt32) = (0x726F_7065_7222_2C22, 0x223A_2274)

    /// The line's time and the length of its report, unescaped into `scratch` (at least as long as
    /// the line).
    @inline(__always)
    package static func scan(_ line: UnsafeRawBufferPointer, into scratch: UnsafeMutableRawPointer) -> (time: Double, reportLength: Int)? {
        guard let base = line.baseAddress, let timeStart = find(timeKey, in: base, count: line.count) else { return nil }
        var index = timeStart
        if index < line.count, line[index] == UInt8(ascii: "\"") { index += 1 }
        let digits = index
        while index < line.count, (line[index] &- UInt8(ascii: "0")) < 10 || line[index] == UInt8(ascii: ".") { index += 1 }
        guard index > digits, index - digits <= 24,
              let time = DecimalTime.value(base + digits, count: index - digits) else { return nil }
        // nginx's own order (`{"time":"…","report":"`): the report's key is right there, and nothing
        // before it can hold another; otherwise the first one anywhere, as `AccessLog.scan` finds it.
        let reportStart: Int
        if timeStart == 8, base.load(as: UInt8.self) == UInt8(ascii: "{"), index + 12 <= line.count,
           base.loadUnaligned(fromByteOffset: index, as: UInt64.self) == middle.0,
           base.loadUnaligned(fromByteOffset: index + 8, as: UInt32.self) == middle.1 {
            reportStart = index + 12
        } else {
            guard let found = find(reportKey, in: base, count: line.count) else { return nil }
            reportStart = found
        }
        var out = 0
        index = reportStart
        // Plain words are copied whole; a word with a quote or a backslash goes byte by byte, and
        // after an escape it is whole words again. (`scratch` is at least as long as the line, and
        // `out` never passes `index`.)
        while true {
            while index + 8 <= line.count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if Words.has(word, UInt8(ascii: "\"")) || Words.has(word, UInt8(ascii: "\\")) { break }
                scratch.storeBytes(of: word, toByteOffset: out, as: UInt64.self)
                out += 8
                index += 8
            }
            guard index < line.count else { return nil }
            let byte = line[index]
            if byte == UInt8(ascii: "\"") { return (time, out) }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < line.count, line[index] == UInt8(ascii: "\"") || line[index] == UInt8(ascii: "\\") else { return nil }
            }
            scratch.storeBytes(of: line[index], toByteOffset: out, as: UInt8.self)
            out += 1
            index += 1
        }
    }

    /// The offset just past the first occurrence of `needle` (which starts with a quote).
    @inline(__always)
    private static func find(_ needle: StaticString, in base: UnsafeRawPointer, count: Int) -> Int? {
        let length = needle.utf8CodeUnitCount
        var start = 0
        while start + length <= count {
            guard let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), count - length + 1 - start) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(quote))
            if Words.equal(base + at, needle.utf8Start, length) { return at + length }
            start = at + 1
        }
        return nil
    }
}
