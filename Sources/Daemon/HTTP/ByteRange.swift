/// A single `Range: bytes=…` request (RFC 9110 §14.2), resolved against a size.
/// Multi-range requests are answered with the whole body, as the RFC allows.
enum ByteRange: Equatable {
    case whole
    case partial(ClosedRange<Int>)
    case unsatisfiable

    static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: " ")
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // Suffix: the last N bytes; a suffix longer than the body is the whole body (§14.1.3).
            guard let n = position(last), n > 0 else { return .unsatisfiable }
            return size == 0 ? .unsatisfiable : .partial(max(0, size - min(n, size))...(size - 1))
        }
        guard let start = position(first) else { return .whole }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .partial(start...(size - 1)) }
        // A last position past the end (however many digits) means the end (§14.1.2).
        guard let end = position(last), end >= start else { return .whole }
        return .partial(start...min(end, size - 1))
    }

    /// A byte position: 1*DIGIT, saturating at Int.max rather than failing, since a position
    /// past any real file still names "the end"; nil when it is not digits.
    static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var value = 0
        for digit in text.utf8 {
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            if overflowTimes || overflowSum { return Int.max }
            value = sum
        }
        return value
    }
}

extension StringProtocol {
    func trimmingCharacters(in character: Character) -> Substring {
        var s = Substring(self)
        while s.first == character { s.removeFirst() }
        while s.last == character { s.removeLast() }
        return s
    }
}
