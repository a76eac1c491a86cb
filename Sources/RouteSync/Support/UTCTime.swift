#if canImport(Glibc)
import Glibc
#endif

/// Unix seconds as UTC `2026-11-24 09:30:00 UTC`, without a date formatter (slow to warm up in a
/// short process): for messages, `status` and events.
package enum UTCTime {
    package static func text(_ seconds: Double) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}
