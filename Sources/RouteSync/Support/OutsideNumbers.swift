/// Numbers that come from outside the process (the origin's manifests, headers and tables, a
/// request body, a file in the cache, the command line) enter through one of these types (G5).
/// Each is built with a failable `init?(exactly:)` that refuses what does not fit, so the code
/// behind it works only with values known to be in range: `Int(someDouble)` traps on NaN, ±inf
/// and anything past `Int.max`, and one typo on the origin side must not crash-loop a fleet.

/// A span of seconds (a rollout's duration, a hold's ttl, a wait): finite, not negative and at
/// most `Seconds.limit`.
package struct Seconds: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// About 31.7 billion years: far past any real span, and small enough that a point in time
    /// plus a span still fits an `Int64` count of seconds.
    package static let limit = 1e18

    package let value: Double

    package init?(exactly value: Double) {
        guard value.isFinite, value >= 0, value <= Self.limit else { return nil }
        self.value = value
    }

    package init?(exactly value: Int64) {
        self.init(exactly: Double(value))
    }

    package static let zero = Seconds(exactly: 0.0)!
    package static let day = Seconds(exactly: 86_400.0)!
    /// The longest a timer sleeps in one go (about 31 years); a later moment is looked at again.
    package static let longestSleep = Seconds(exactly: 1e9)!

    package static func < (a: Seconds, b: Seconds) -> Bool { a.value < b.value }

    package var description: String { Whole.text(value) + " s" }
}

/// A moment as unix seconds (a rollout's start, a hold's expiry): finite, not before 1970, and
/// at most `Seconds.limit`. A start centuries away is valid (the release simply waits); a number
/// past the limit is a typo, refused at the edge.
package struct UnixTime: Sendable, Hashable, Comparable {
    package let value: Double

    package init?(exactly value: Double) {
        guard value.isFinite, value >= 0, value <= Seconds.limit else { return nil }
        self.value = value
    }

    package static func < (a: UnixTime, b: UnixTime) -> Bool { a.value < b.value }

    /// `self + span`: both at most 1e18, so the sum is finite and below `Int64.max`.
    package func adding(_ span: Seconds) -> Double { value + span.value }
}

/// A size in bytes (a table entry's `size`, a body's length): not negative and at most
/// `ByteCount.limit`. Sums are checked: a total past the limit is nil, never a trap.
package struct ByteCount: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 2^53 bytes (8 PiB): more than any file a device downloads, and exact as a Double.
    package static let limit: Int64 = 1 << 53

    package let value: Int64

    package init?(exactly value: Int64) {
        guard value >= 0, value <= Self.limit else { return nil }
        self.value = value
    }

    package init?(exactly value: Double) {
        guard let whole = Int64(exactly: value) else { return nil }
        self.init(exactly: whole)
    }

    package static let zero = ByteCount(exactly: Int64(0))!

    /// nil when the total passes `limit`.
    package func adding(_ other: ByteCount) -> ByteCount? {
        let (sum, overflow) = value.addingReportingOverflow(other.value)
        return overflow ? nil : ByteCount(exactly: sum)
    }

    /// The sum of `counts`, nil when it passes `limit`.
    package static func sum(_ counts: some Sequence<ByteCount>) -> ByteCount? {
        var total = ByteCount.zero
        for count in counts {
            guard let next = total.adding(count) else { return nil }
            total = next
        }
        return total
    }

    package static func < (a: ByteCount, b: ByteCount) -> Bool { a.value < b.value }

    package var description: String { "\(value)" }
}

/// The one way from a Double to a whole number for display and for waits: rounded, clamped to
/// the range asked for, NaN as 0. Never traps, whatever a cache file or a clock says.
package enum Whole {
    package static func clamped(_ value: Double, to range: ClosedRange<Int> = Int.min...Int.max) -> Int {
        guard !value.isNaN else { return max(range.lowerBound, min(0, range.upperBound)) }
        let rounded = value.rounded()
        if rounded <= Double(range.lowerBound) { return range.lowerBound }
        // Double(Int.max) rounds up to 2^63, which does not fit: compare with >=.
        if rounded >= Double(range.upperBound) { return range.upperBound }
        return Int(exactly: rounded) ?? range.upperBound
    }

    /// "12" for 12.0, "1.5" for 1.5, "1e+300" for 1e300: what a message shows of a number.
    package static func text(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(clamped(value)) }
        return String(value)
    }

    /// Milliseconds to sleep for a wait of `seconds`, at most `ceiling` seconds: a far moment is
    /// reached by sleeping that long and looking again; a negative or NaN wait is none.
    package static func sleepMilliseconds(_ seconds: Double, ceiling: Seconds = .longestSleep) -> Int {
        clamped(min(seconds, ceiling.value) * 1000, to: 0...Int.max)
    }
}

/// Literals are the program's own numbers, not outside ones: a literal out of range is a bug.
extension Seconds: ExpressibleByIntegerLiteral {
    package init(integerLiteral value: Int64) {
        guard let seconds = Seconds(exactly: value) else { preconditionFailure("\(value) s is out of range") }
        self = seconds
    }
}

extension UnixTime: ExpressibleByIntegerLiteral {
    package init(integerLiteral value: Int64) {
        guard let time = UnixTime(exactly: Double(value)) else { preconditionFailure("unix time \(value) is out of range") }
        self = time
    }
}
