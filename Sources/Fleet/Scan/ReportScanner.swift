#if canImport(Glibc)
import Glibc
#endif
package import ReportHeader

/// The fields of a `Cenarius-Report` the tally counts, as ranges of the header's bytes.
package struct ReportFields: Sendable {
    package var device = 0..<0
    package var release = 0..<0
    package var state = FleetReport.State.confirmed
    /// The `failed` names, in the header's order (at most `ReportScanner.maxFailed` here).
    package var failed = FailedNames()
    /// `why`: 0 for none (or a code this version does not know), else `ReportScanner.whyNumber`.
    package var why = 0
    /// `peer` and `origin` bytes (docs/peers.md): -1 unless both are there as integers ≥ 0.
    package var peer: Int64 = -1
    package var origin: Int64 = -1

    package init() {}
}

/// Up to `ReportScanner.maxFailed` ranges held inline: copying the fields retains nothing.
package struct FailedNames: Sendable {
    private var bounds: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    package private(set) var count = 0

    package init() {}

    @inline(__always)
    package subscript(index: Int) -> Range<Int> {
        let packed = withUnsafeBytes(of: bounds) { $0.load(fromByteOffset: index * 8, as: UInt64.self) }
        return Int(packed & 0xFFFF_FFFF)..<Int(packed >> 32)
    }

    @inline(__always)
    package mutating func append(_ range: Range<Int>) {
        let packed = UInt64(range.lowerBound) | UInt64(range.upperBound) << 32
        withUnsafeMutableBytes(of: &bounds) { $0.storeBytes(of: packed, toByteOffset: count * 8, as: UInt64.self) }
        count += 1
    }

    @inline(__always) package mutating func removeAll() { count = 0 }

    package var ranges: [Range<Int>] { (0..<count).map { self[$0] } }
}

/// A shortcut through the one shape every cenariusd writes: RFC 9651's serialization of
/// `Cenarius-Report` (members joined by ", ", strings without escapes, tokens, an inner list of
/// strings, no parameters). For those bytes it gives what `FleetReport(headerValue:)` would, without
/// building a dictionary of Strings (the library's parse allocated several times per line, the
/// largest cost of a log of millions of lines). Whatever it is not sure of — escapes, parameters,
/// signed or decimal numbers, booleans, odd spacing, a trailing comma — is `.unsure`, and the caller asks the library,
/// which stays the reference (`ReportScannerTests` compares the two on every shape it accepts).
package enum ReportScanner {
    package enum Outcome {
        case report
        /// The library would refuse it as a report too (a dictionary it parses, without a device,
        /// a release or a known state; or longer than a report may be).
        case notAReport
        case unsure
    }

    /// More `failed` names than this go to the library (a device sends at most four).
    static let maxFailed = 8

    private enum Kind: UInt8 { case none, string, token, list, integer }

    /// Reads `header` into `fields` (ranges of `header`).
    @inline(__always)
    package static func scan(_ header: UnsafeRawBufferPointer, into fields: inout ReportFields) -> Outcome {
        guard header.count <= 4096 else { return .notAReport }
        let count = header.count
        var index = 0
        while index < count, header[index] == UInt8(ascii: " ") { index += 1 }
        var device = (Kind.none, 0..<0), release = (Kind.none, 0..<0), state = (Kind.none, 0..<0), why = (Kind.none, 0..<0)
        var failedKind = Kind.none
        var peer = (Kind.none, Int64(0)), origin = (Kind.none, Int64(0))
        fields.failed.removeAll()
        while index < count {
            // The key.
            let keyStart = index
            guard isKeyStart(header[index]) else { return .unsure }
            index += 1
            while index < count, isKey(header[index]) { index += 1 }
            let key = keyStart..<index
            guard index < count, header[index] == UInt8(ascii: "=") else { return .unsure }
            index += 1
            guard index < count else { return .unsure }
            // The value: a string, a token, or an inner list of strings.
            let kind: Kind
            var value = index..<index
            var number: Int64 = 0
            let first = header[index]
            if (first &- UInt8(ascii: "0")) < 10 {
                // RFC 9651 integers: at most 15 digits. A sign or a decimal is the library's.
                while index < count, (header[index] &- UInt8(ascii: "0")) < 10 {
                    guard index - value.lowerBound < 15 else { return .unsure }
                    number = number &* 10 &+ Int64(header[index] &- UInt8(ascii: "0"))
                    index += 1
                }
                kind = .integer
            } else if first == UInt8(ascii: "\"") {
                guard let end = stringEnd(header, from: index + 1) else { return .unsure }
                value = (index + 1)..<end
                index = end + 1
                kind = .string
            } else if first == UInt8(ascii: "(") {
                index += 1
                let isFailed = matches(header, key, "failed")
                if isFailed { fields.failed.removeAll() }
                while true {
                    while index < count, header[index] == UInt8(ascii: " ") { index += 1 }
                    guard index < count else { return .unsure }
                    if header[index] == UInt8(ascii: ")") { index += 1; break }
                    guard header[index] == UInt8(ascii: "\""), let end = stringEnd(header, from: index + 1) else { return .unsure }
                    if isFailed {
                        guard fields.failed.count < maxFailed else { return .unsure }
                        fields.failed.append((index + 1)..<end)
                    }
                    index = end + 1
                    guard index < count, header[index] == UInt8(ascii: " ") || header[index] == UInt8(ascii: ")") else { return .unsure }
                }
                kind = .list
            } else if isTokenStart(first) {
                index += 1
                while index < count, isToken(header[index]) { index += 1 }
                value = value.lowerBound..<index
                kind = .token
            } else {
                return .unsure
            }
            // Parameters (`;name=value`) belong to the library.
            if index < count, header[index] == UInt8(ascii: ";") { return .unsure }
            // A key given twice keeps its last value, as the library's dictionary does.
            if matches(header, key, "device") { device = (kind, value) }
            else if matches(header, key, "release") { release = (kind, value) }
            else if matches(header, key, "state") { state = (kind, value) }
            else if matches(header, key, "why") { why = (kind, value) }
            else if matches(header, key, "peer") { peer = (kind, number) }
            else if matches(header, key, "origin") { origin = (kind, number) }
            else if matches(header, key, "failed") {
                failedKind = kind
                if kind != .list { fields.failed.removeAll() }
            }
            while index < count, header[index] == UInt8(ascii: " ") || header[index] == UInt8(ascii: "\t") { index += 1 }
            if index == count { break }
            guard header[index] == UInt8(ascii: ",") else { return .unsure }
            index += 1
            while index < count, header[index] == UInt8(ascii: " ") || header[index] == UInt8(ascii: "\t") { index += 1 }
            guard index < count else { return .unsure }
        }
        // What `FleetReport(headerValue:)` asks of the dictionary the library would have made.
        guard device.0 == .string || device.0 == .token, !device.1.isEmpty,
              release.0 == .string || release.0 == .token,
              state.0 == .token, let parsedState = self.state(header, state.1) else { return .notAReport }
        if failedKind != .list { fields.failed.removeAll() }
        fields.device = device.1
        fields.release = release.1
        fields.state = parsedState
        fields.why = why.0 == .string || why.0 == .token ? reason(header, why.1) : 0
        // As `FleetReport(headerValue:)`: both integers, or neither counted.
        (fields.peer, fields.origin) = peer.0 == .integer && origin.0 == .integer ? (peer.1, origin.1) : (-1, -1)
        return .report
    }

    /// The index of a string's closing quote; nil for escapes (left to the library), bytes a
    /// string may not hold, or no end.
    @inline(__always)
    private static func stringEnd(_ header: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        let base = header.baseAddress!
        // Whole words of plain bytes first: none below 0x20, none from 0x7F, no quote, no backslash.
        while index + 8 <= header.count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if Words.hasBelow(word, 0x20) || word & 0x8080_8080_8080_8080 != 0 || Words.has(word, 0x7F)
                || Words.has(word, UInt8(ascii: "\"")) || Words.has(word, UInt8(ascii: "\\")) { break }
            index += 8
        }
        while index < header.count {
            let byte = header[index]
            if byte == UInt8(ascii: "\"") { return index }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    @inline(__always) private static func isKeyStart(_ byte: UInt8) -> Bool { (byte &- UInt8(ascii: "a")) < 26 || byte == UInt8(ascii: "*") }
    @inline(__always) private static func isKey(_ byte: UInt8) -> Bool {
        (byte &- UInt8(ascii: "a")) < 26 || (byte &- UInt8(ascii: "0")) < 10 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
    }
    @inline(__always) private static func isTokenStart(_ byte: UInt8) -> Bool { ((byte | 0x20) &- UInt8(ascii: "a")) < 26 || byte == UInt8(ascii: "*") }
    /// RFC 9651's tchar, and ":" and "/".
    @inline(__always) private static func isToken(_ byte: UInt8) -> Bool {
        if ((byte | 0x20) &- UInt8(ascii: "a")) < 26 || (byte &- UInt8(ascii: "0")) < 10 { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    @inline(__always)
    private static func matches(_ header: UnsafeRawBufferPointer, _ range: Range<Int>, _ word: StaticString) -> Bool {
        range.count == word.utf8CodeUnitCount && Words.equal(header.baseAddress! + range.lowerBound, word.utf8Start, range.count)
    }

    private static func state(_ header: UnsafeRawBufferPointer, _ range: Range<Int>) -> FleetReport.State? {
        if matches(header, range, "confirmed") { return .confirmed }
        if matches(header, range, "trial") { return .trial }
        if matches(header, range, "deferred") { return .deferred }
        if matches(header, range, "held") { return .held }
        return nil
    }


    /// A code's number: its place in `WhyReason.allCases` + 1 (0 is none).
    package static func whyNumber(_ reason: WhyReason) -> Int { WhyReason.allCases.firstIndex(of: reason)! + 1 }
    package static func why(number: Int) -> WhyReason? { number == 0 ? nil : WhyReason.allCases[number - 1] }

    package static func stateNumber(_ state: FleetReport.State) -> Int {
        switch state {
        case .confirmed: 0
        case .trial: 1
        case .deferred: 2
        case .held: 3
        }
    }
    package static let states: [FleetReport.State] = [.confirmed, .trial, .deferred, .held]

    /// A code's number (`whyNumber`), found by its length first; 0 for a code this version does not know.
    /// (A table of the codes would be a lazy global, checked on every line.)
    private static func reason(_ header: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int {
        switch range.count {
        case 4:
            if matches(header, range, "held") { return 12 }
            if matches(header, range, "lock") { return 15 }
        case 5:
            if matches(header, range, "trial") { return 8 }
        case 6:
            if matches(header, range, "halted") { return 11 }
        case 7:
            if matches(header, range, "current") { return 1 }
            if matches(header, range, "storage") { return 14 }
            if matches(header, range, "metered") { return 18 }
        case 9:
            if matches(header, range, "signature") { return 5 }
            if matches(header, range, "integrity") { return 6 }
            if matches(header, range, "held-back") { return 7 }
            if matches(header, range, "inhibited") { return 20 }
        case 11:
            if matches(header, range, "downloading") { return 13 }
        case 12:
            if matches(header, range, "develop-mode") { return 16 }
        case 13:
            if matches(header, range, "switch-window") { return 19 }
        case 14:
            if matches(header, range, "not-polled-yet") { return 2 }
        case 15:
            if matches(header, range, "deferred-moment") { return 9 }
            if matches(header, range, "deferred-native") { return 10 }
            if matches(header, range, "download-window") { return 17 }
            if matches(header, range, "switch-at-start") { return 21 }
        case 16:
            if matches(header, range, "origin-unchanged") { return 4 }
        case 18:
            if matches(header, range, "origin-unreachable") { return 3 }
        default:
            break
        }
        return 0
    }

}
