/// A log line's `time` (`[0-9.]`, as nginx's `$msec` writes it) read straight from its bytes, with
/// exactly the value `Double(String)` gives, and no String made: a mantissa below 2⁵³ and a power of
/// ten up to 10²² are both exact doubles, so their quotient is the correctly rounded value of the
/// decimal (Clinger's fast path), which is what `strtod` returns too.
enum DecimalTime {
    private static let powers: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                          1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

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
        guard digits > 0, mantissa <= 1 << 53, fraction < powers.count else { return nil }
        return Double(mantissa) / powers[fraction]
    }
}
