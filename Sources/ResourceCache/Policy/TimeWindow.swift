#if canImport(Glibc)
import Glibc
#endif
package import RouteSync

/// A recurring window of local time (`TZ`): `daily 22:00-06:00`, `Mon-Fri 01:00-05:00`,
/// `Sat,Sun 09:00-18:00`. A window whose end is not after its start runs across midnight and
/// ends the next day; the days are the days it opens on. A window that can never open (the same
/// start and end) is refused when it is given, never found out as a device that never updates.
package struct TimeWindow: Sendable, Equatable, CustomStringConvertible {
    /// The days it opens on, 0 = Sunday … 6 = Saturday.
    package let days: Set<Int>
    /// Minutes after local midnight.
    package let start: Int
    package let end: Int
    package let description: String

    private static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    package init(_ spec: String) throws(CenariusError) {
        func refuse(_ why: String) -> CenariusError {
            .usage("window \(JSONText.quoted(spec)): \(why) (like `daily 22:00-06:00` or `Mon-Fri 01:00-05:00`, local time)")
        }
        let parts = spec.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw refuse("a day part and a time part") }
        var days = Set<Int>()
        if parts[0].lowercased() == "daily" {
            days = Set(0...6)
        } else {
            for item in parts[0].lowercased().split(separator: ",") {
                let range = item.split(separator: "-", omittingEmptySubsequences: false)
                guard (1...2).contains(range.count), let first = Self.dayNames.firstIndex(of: String(range[0])),
                      let last = Self.dayNames.firstIndex(of: String(range.last!)) else { throw refuse("days are Mon, Tue, Wed, Thu, Fri, Sat, Sun or daily") }
                var day = first
                days.insert(day)
                while day != last {
                    day = (day + 1) % 7
                    days.insert(day)
                }
            }
        }
        let times = parts[1].split(separator: "-", omittingEmptySubsequences: false)
        func minutes(_ text: Substring) -> Int? {
            let hm = text.split(separator: ":", omittingEmptySubsequences: false)
            guard hm.count == 2, hm[0].count <= 2, hm[1].count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0...24).contains(h), (0...59).contains(m),
                  h * 60 + m <= 1440 else { return nil }
            return h * 60 + m
        }
        guard times.count == 2, let start = minutes(times[0]), let end = minutes(times[1]) else { throw refuse("times are HH:MM-HH:MM") }
        guard start < 1440 else { throw refuse("it starts at 24:00; write 00:00") }
        guard start != end % 1440 || end == 1440 && start == 0 else { throw refuse("it starts when it ends, so it never opens") }
        self.days = days
        self.start = start
        self.end = end
        description = spec
    }

    /// Whether `time` (unix seconds) falls inside, in the device's local time.
    package func contains(_ time: Double) -> Bool {
        let local = Self.local(time)
        let minute = Int(local.tm_hour) * 60 + Int(local.tm_min)
        let day = Int(local.tm_wday)
        if start < end { return days.contains(day) && minute >= start && minute < end }
        // Across midnight: the evening of an opening day, or the morning after one.
        return (days.contains(day) && minute >= start) || (days.contains((day + 6) % 7) && minute < end)
    }

    /// The next moment after `time` the window opens (unix seconds).
    package func nextOpening(after time: Double) -> Double? {
        var best: Double?
        for offset in 0...8 {
            var parts = Self.local(time)
            parts.tm_mday += Int32(offset)
            parts.tm_hour = Int32(start / 60)
            parts.tm_min = Int32(start % 60)
            parts.tm_sec = 0
            parts.tm_isdst = -1
            let moment = Double(mktime(&parts))
            guard moment > time, days.contains(Int(parts.tm_wday)) else { continue }
            best = min(best ?? moment, moment)
        }
        return best
    }

    static func local(_ time: Double) -> tm {
        var seconds = time_t(Whole.clamped(time, to: 0...253_402_300_799))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return parts
    }
}

extension [TimeWindow] {
    /// No windows: always open. Else open when any is; nil when open, else when the first opens.
    package func closedUntil(_ time: Double) -> Double?? {
        guard !isEmpty, !contains(where: { $0.contains(time) }) else { return nil }
        return .some(compactMap { $0.nextOpening(after: time) }.min())
    }
}
