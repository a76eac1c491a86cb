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
    private static let timeKey = Array(#""time":"#.utf8)
    private static let reportKey = Array(#""report":""#.utf8)

    /// The line's time and the length of its report, unescaped into `scratch` (at least as long as
    /// the line).
    @inline(__always)
    package static func scan(_ line: UnsafeRawBufferPointer, into scratch: UnsafeMutableRawPointer) -> (time: Double, reportLength: Int)? {
        guard let base = line.baseAddress,
              let timeStart = find(timeKey, in: base, count: line.count),
              let reportStart = find(reportKey, in: base, count: line.count) else { return nil }
        var index = timeStart
        if index < line.count, line[index] == UInt8(ascii: "\"") { index += 1 }
        let digits = index
        while index < line.count, (line[index] &- UInt8(ascii: "0")) < 10 || line[index] == UInt8(ascii: ".") { index += 1 }
        guard index > digits, index - digits <= 24,
              let time = DecimalTime.value(base + digits, count: index - digits) else { return nil }
        var out = 0
        index = reportStart
        while index < line.count {
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
        return nil
    }

    /// The offset just past the first occurrence of `needle` (which starts with a quote).
    @inline(__always)
    private static func find(_ needle: [UInt8], in base: UnsafeRawPointer, count: Int) -> Int? {
        needle.withUnsafeBytes { key -> Int? in
            let length = key.count
            var start = 0
            while start + length <= count {
                guard let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), count - length + 1 - start) else { return nil }
                let at = base.distance(to: UnsafeRawPointer(quote))
                if memcmp(base + at, key.baseAddress!, length) == 0 { return at + length }
                start = at + 1
            }
            return nil
        }
    }
}
