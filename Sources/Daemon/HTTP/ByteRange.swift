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
            // Suffix: the last N bytes.
            guard let n = Int(last), n > 0 else { return .unsatisfiable }
            return size == 0 ? .unsatisfiable : .partial(max(0, size - n)...(size - 1))
        }
        guard let start = Int(first), start >= 0 else { return .whole }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .partial(start...(size - 1)) }
        guard let end = Int(last), end >= start else { return .whole }
        return .partial(start...min(end, size - 1))
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
