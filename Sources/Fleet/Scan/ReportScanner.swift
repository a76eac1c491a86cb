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
    package var failed: [Range<Int>] = []
    /// `why`: 0 for none (or a code this version does not know), else `ReportScanner.whyNumber`.
    package var why = 0

    package init() {}
}

/// A shortcut through the one shape every cenariusd writes: RFC 9651's serialization of
/// `Cenarius-Report` (members joined by ", ", strings without escapes, tokens, an inner list of
/// strings, no parameters). For those bytes it gives what `FleetReport(headerValue:)` would, without
/// building a dictionary of Strings (the library's parse allocated several times per line, the
/// largest cost of a log of millions of lines). Whatever it is not sure of — escapes, parameters,
/// numbers, booleans, odd spacing, a trailing comma — is `.unsure`, and the caller asks the library,
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

    private enum Kind: UInt8 { case none, string, token, list }

    /// Reads `header` into `fields` (ranges of `header`); `fields.failed` keeps its storage.
    @inline(__always)
    package static func scan(_ header: UnsafeRawBufferPointer, into fields: inout ReportFields) -> Outcome {
        guard header.count <= 4096 else { return .notAReport }
        let count = header.count
        var index = 0
        while index < count, header[index] == UInt8(ascii: " ") { index += 1 }
        var device = (Kind.none, 0..<0), release = (Kind.none, 0..<0), state = (Kind.none, 0..<0), why = (Kind.none, 0..<0)
        var failedKind = Kind.none
        fields.failed.removeAll(keepingCapacity: true)
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
            let first = header[index]
            if first == UInt8(ascii: "\"") {
                guard let end = stringEnd(header, from: index + 1) else { return .unsure }
                value = (index + 1)..<end
                index = end + 1
                kind = .string
            } else if first == UInt8(ascii: "(") {
                index += 1
                let isFailed = matches(header, key, "failed")
                if isFailed { fields.failed.removeAll(keepingCapacity: true) }
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
            else if matches(header, key, "failed") {
                failedKind = kind
                if kind != .list { fields.failed.removeAll(keepingCapacity: true) }
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
        if failedKind != .list { fields.failed.removeAll(keepingCapacity: true) }
        fields.device = device.1
        fields.release = release.1
        fields.state = parsedState
        fields.why = why.0 == .string || why.0 == .token ? reason(header, why.1) : 0
        return .report
    }

    /// The index of a string's closing quote; nil for escapes (left to the library), bytes a
    /// string may not hold, or no end.
    @inline(__always)
    private static func stringEnd(_ header: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
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
    private static let tokenBytes: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        return ((byte | 0x20) &- UInt8(ascii: "a")) < 26 || (byte &- UInt8(ascii: "0")) < 10 || Array("!#$%&'*+-.^_`|~:/".utf8).contains(byte)
    }
    @inline(__always) private static func isToken(_ byte: UInt8) -> Bool { tokenBytes[Int(byte)] }

    @inline(__always)
    private static func matches(_ header: UnsafeRawBufferPointer, _ range: Range<Int>, _ word: StaticString) -> Bool {
        range.count == word.utf8CodeUnitCount && memcmp(header.baseAddress! + range.lowerBound, word.utf8Start, range.count) == 0
    }

    private static func state(_ header: UnsafeRawBufferPointer, _ range: Range<Int>) -> FleetReport.State? {
        if matches(header, range, "confirmed") { return .confirmed }
        if matches(header, range, "trial") { return .trial }
        if matches(header, range, "deferred") { return .deferred }
        if matches(header, range, "held") { return .held }
        return nil
    }

    private static let reasons: [[UInt8]] = WhyReason.allCases.map { Array($0.rawValue.utf8) }

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

    private static func reason(_ header: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int {
        for (number, bytes) in reasons.enumerated() where bytes.count == range.count {
            if bytes.withUnsafeBytes({ memcmp($0.baseAddress!, header.baseAddress! + range.lowerBound, range.count) }) == 0 { return number + 1 }
        }
        return 0
    }
}
