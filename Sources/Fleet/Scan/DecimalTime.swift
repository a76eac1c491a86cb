/// A log line's `time` (`[0-9.]`, as nginx's `$msec` writes it) read straight from its bytes, with
/// exactly the value `Double(String)` gives, and no String made: a mantissa below 2⁵³ and a power of
/// ten up to 10²² are both exact doubles, so their quotient is the correctly rounded value of the
/// decimal (Clinger's fast path), which is what `strtod` returns too.
enum DecimalTime {
    /// 10ⁿ for n ≤ 22, every one an exact double (a switch, not a global array: no lazy global per line).
    @inline(__always)
    private static func power(_ n: Int) -> Double {
        switch n {
        case 0: 1e0
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        case 18: 1e18
        case 19: 1e19
        case 20: 1e20
        case 21: 1e21
        default: 1e22
        }
    }

    /// The value of `count` bytes of digits and dots at `bytes`; nil when the fast path cannot tell
    /// (no digit, a second dot, more than 18 digits, a mantissa past 2⁵³): the caller then asks
    /// `Double(String)`, which also says which of those are numbers at all.
    @inline(__always)
    static func value(_ bytes: UnsafeRawPointer, count: Int) -> Double? {
        var mantissa: UInt64 = 0
        var digits = 0
        var dot = -1
        for index in 0..<count {
            let byte = bytes.load(fromByteOffset: index, as: UInt8.self)
            if byte == UInt8(ascii: ".") {
                guard dot < 0 else { return nil }
                dot = index
                continue
            }
            digits += 1
            guard digits <= 18 else { return nil }
            mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
        }
        let fraction = dot < 0 ? 0 : count - dot - 1
        guard digits > 0, mantissa <= 1 << 53, fraction <= 22 else { return nil }
        return Double(mantissa) / power(fraction)
    }
}
