#if canImport(Glibc)
import Glibc
#endif

/// The `Date:` header line (RFC 9110 §5.6.7 IMF-fixdate), formatted at most once a second per
/// connection: the clock read is a vDSO call, the formatting is not free.
struct HTTPDateLine {
    private var second = -1
    private(set) var line: [UInt8] = []

    mutating func current() -> [UInt8] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        if now.tv_sec != second {
            second = now.tv_sec
            line = Array("Date: \(HTTPDateLine.format(now.tv_sec))\r\n".utf8)
        }
        return line
    }

    static func format(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A cheap monotonic clock for per-request bookkeeping (vDSO, no syscall, ~4 ms resolution).
enum HTTPClock {
    static func milliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}
