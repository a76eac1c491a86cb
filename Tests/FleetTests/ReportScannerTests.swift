import Foundation
import Fleet
import ReportHeader
import Testing

/// The hand-written shortcuts must agree with what they shortcut: `ReportScanner` with
/// `FleetReport(headerValue:)` (apple's structured-headers library) wherever it answers, and
/// nginx lines read from bytes with `AccessLog.parseLine`.
@Suite struct ReportScannerTests {
    /// What the scanner says of `header`, checked against the library.
    @discardableResult
    static func agree(_ header: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> ReportScanner.Outcome {
        var fields = ReportFields()
        let outcome = header.withUnsafeBytes { ReportScanner.scan($0, into: &fields) }
        let library = FleetReport(headerValue: header)
        let text = String(decoding: header, as: UTF8.self)
        switch outcome {
        case .report:
            guard let report = library else {
                Issue.record("the library refuses what the scanner read: \(text)", sourceLocation: sourceLocation)
                return outcome
            }
            let slice = { (range: Range<Int>) in String(decoding: header[range], as: UTF8.self) }
            #expect(slice(fields.device) == report.device && slice(fields.release) == report.release && fields.state == report.state,
                    "\(text)", sourceLocation: sourceLocation)
            #expect(fields.failed.ranges.map(slice) == report.failed, "\(text)", sourceLocation: sourceLocation)
            #expect(ReportScanner.why(number: fields.why) == report.why, "\(text)", sourceLocation: sourceLocation)
            #expect((fields.peer < 0 ? nil : fields.peer) == report.peerBytes && (fields.origin < 0 ? nil : fields.origin) == report.originBytes,
                    "\(text)", sourceLocation: sourceLocation)
        case .notAReport:
            #expect(library == nil, "the library reads a report the scanner refused: \(text)", sourceLocation: sourceLocation)
        case .unsure:
            break
        }
        return outcome
    }

    @Test func everyShapeACenariusdSendsIsReadWithoutTheLibrary() {
        let reports = [
            FleetReport(device: "3f2a9c0d1e4b5a67", release: "2026.11-a", state: .trial, failed: ["2026.11-b"], native: "2.3.0", why: .trial),
            FleetReport(device: "d", release: "r", state: .confirmed),
            FleetReport(device: "d", release: "", state: .held, failed: ["a", "b", "c", "d"], why: .heldBack),
            FleetReport(device: "d", release: "x y", state: .deferred, native: "1", why: .deferredNative),
        ]
        for report in reports {
            let header = Array(report.headerValue()!.utf8)
            #expect(Self.agree(header) == .report, "\(report)")
        }
    }

    /// `peer=N, origin=M` are read without the library, as it reads them; anything odder is its.
    @Test func peerAndOriginBytesAreReadWithoutTheLibrary() {
        var report = FleetReport(device: "d", release: "r", state: .confirmed, why: .current)
        (report.peerBytes, report.originBytes) = (123_456_789, 0)
        let header = Array(report.headerValue()!.utf8)
        #expect(Self.agree(header) == .report)
        var fields = ReportFields()
        _ = header.withUnsafeBytes { ReportScanner.scan($0, into: &fields) }
        #expect(fields.peer == 123_456_789 && fields.origin == 0)
        for text in [#"device="d", release="r", state=trial, peer=5"#, #"device="d", release="r", state=trial, origin=5, peer=007"#,
                     #"device="d", release="r", state=trial, peer="5", origin=6"#, #"device="d", release="r", state=trial, peer=999999999999999, origin=1"#,
                     #"device="d", release="r", state=trial, other=42"#] {
            #expect(Self.agree(Array(text.utf8)) == .report, "\(text)")
        }
        for text in [#"device="d", release="r", state=trial, peer=-5, origin=6"#, #"device="d", release="r", state=trial, peer=1.5, origin=6"#,
                     #"device="d", release="r", state=trial, peer=1000000000000000, origin=6"#, #"device="d", release="r", state=trial, peer=5;a, origin=6"#] {
            #expect(Self.agree(Array(text.utf8)) == .unsure, "\(text)")
        }
    }

    /// Every code, so that a code added to `WhyReason` and not to the scanner's table fails here.
    @Test func everyWhyCodeIsReadAsTheLibraryReadsIt() {
        for reason in WhyReason.allCases {
            let header = Array(FleetReport(device: "d", release: "r", state: .trial, why: reason).headerValue()!.utf8)
            var fields = ReportFields()
            #expect(header.withUnsafeBytes { ReportScanner.scan($0, into: &fields) } == .report)
            #expect(ReportScanner.why(number: fields.why) == reason, "\(reason)")
        }
    }

    @Test func otherShapesAgreeWithTheLibrary() {
        let headers = [
            #"device="d", release="r", state=trial"#, #"  device="d", release="r", state=trial  "#, #"device="d",release="r",state=trial"#,
            "device=\"d\",\trelease=\"r\" ,\t state=trial", #"device=abc, release=r.1/x:y, state=held"#, #"device="", release="r", state=trial"#,
            #"device="d", release="r", state="trial""#, #"device="d", release="r", state=exploded"#, #"device="d", state=trial"#,
            #"release="r", state=trial"#, #"device="d", release="r", state=trial,"#, #"device="d", release="r", state=trial, "#,
            #"device="d", device="e", release="r", state=trial"#, #"device="d", release="r", state=trial, state=held"#,
            #"device="d", release="r", state=trial, failed=("a" "b"), failed=("c")"#, #"device="d", release="r", state=trial, failed=("a"), failed=x"#,
            #"device="d", release="r", state=trial, failed=x, failed=( "a"  "b" )"#, #"device="d", release="r", state=trial, failed=()"#,
            #"device="d", release="r", state=trial, failed=("a" tok)"#, #"device="d", release="r", state=trial, failed=("a";p=1)"#,
            #"device="d", release="r", state=trial, failed=("a");p"#, #"device="d";x=1, release="r", state=trial"#,
            #"device="d", release="r", state=trial, battery=42"#, #"device="d", release="r", state=trial, ok"#, #"device="d", release="r", state=trial, ok=?1"#,
            #"device="d\"e", release="r", state=trial"#, #"device="d", release="r\\s", state=trial"#, #"device="d", release="r", state=trial, why=held-back"#,
            #"device="d", release="r", state=trial, why="current""#, #"device="d", release="r", state=trial, why=later-code"#, #"device="d", release="r", state=trial, why=("x")"#,
            #"device=("d"), release="r", state=trial"#, #"Device="d", release="r", state=trial"#, #"*x="d", device="d", release="r", state=trial"#,
            "device=\"d\u{7F}\", release=\"r\", state=trial", "device=\"caf\u{e9}\", release=\"r\", state=trial", #"device="d", release="r", state=trial, native=:YWJj:"#,
            "", " ", ",", "device", "device=", #"device="d"#, #"device="d", release="r", state=trial, failed=("a""#, #"device="d", release="r", state=trial, failed=("a" "#,
            #"device="d", release="r", state=trial x"#, #"device="d", release="r", state=tr%al"#, #"device="d", release=@12, state=trial"#,
        ]
        for header in headers { Self.agree(Array(header.utf8)) }
        #expect(Self.agree(Array((#"device="d", release=""# + String(repeating: "r", count: 5000) + #"", state=trial"#).utf8)) == .notAReport)
    }

    /// Random damage to real headers: wherever the scanner answers, the library says the same.
    @Test func damagedHeadersAgreeWithTheLibrary() {
        var rng = SplitMix(seed: 55)
        let alphabet = Array(#" ,;=()"\*?:-.ab09AZ\#t"#.utf8) + [0x7F, 0xC3, 0x00]
        let base = [
            Array(FleetReport(device: "3f2a9c0d1e4b5a67", release: "2026.11-a", state: .trial, failed: ["2026.11-b", "x"], native: "2.3.0", why: .trial).headerValue()!.utf8),
            Array(#"device="d", release="r", state=held, failed=("a"), why=current"#.utf8),
        ]
        var answered = 0
        for n in 0..<20_000 {
            var header = base[n % 2]
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let at = Int(rng.next() % UInt64(header.count))
                switch rng.next() % 3 {
                case 0: header[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: header.remove(at: at)
                default: header.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                }
                if header.isEmpty { header = [0x20] }
            }
            if Self.agree(header) != .unsure { answered += 1 }
        }
        #expect(answered > 5000, "the scanner answers most damaged headers itself (\(answered))")
    }

    /// The devices' keys are SipHash-1-3. The value below comes from a port of the same code whose
    /// SipHash-2-4 form gives the reference vectors (key 00…0f: 0x726fdb47dd0e0e31 for no bytes,
    /// 0xa129ca6149be45e5 for 00…0e); here the 1-3 form is pinned, and distinct ids stay distinct.
    @Test func deviceKeysAreSipHash13() {
        let hash = DeviceHash(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)
        #expect(Array(UInt8(0)..<15).withUnsafeBytes { hash($0) } == 0xD320_D86D_2A51_9956)
        var keys = Set<UInt64>()
        for n in 0..<100_000 { keys.insert(Array(String(format: "%016x", n).utf8).withUnsafeBytes { hash($0) }) }
        #expect(keys.count == 100_000)
        #expect(Array("d".utf8).withUnsafeBytes { DeviceHash()($0) } != Array("d".utf8).withUnsafeBytes { DeviceHash()($0) }, "a key per run")
    }

    /// nginx's `$msec` and the other times a line may carry, read from bytes as `Double(String)` reads them.
    @Test func timesAreReadAsDoubleReadsThem() {
        var rng = SplitMix(seed: 9)
        let fixed = ["1764000000.123", "0", "1.", ".5", "00017.250", "1764000000.123456", "9007199254740993", "123456789012345678", "1.2.3", "."]
        var samples = fixed
        for _ in 0..<20_000 {
            let digits = Int(rng.next() % 20) + 1
            var text = String((0..<digits).map { _ in Character(String(rng.next() % 10)) })
            if rng.next() % 3 != 0 { text.insert(".", at: text.index(text.startIndex, offsetBy: Int(rng.next() % UInt64(digits + 1)))) }
            samples.append(text)
        }
        for text in samples {
            let line = #"{"time":"\#(text)","report":"device=\"d\", release=\"r\", state=trial"}"#
            let reference = AccessLog.parseLine(Array(line.utf8)[...])
            var scratch = [UInt8](repeating: 0, count: line.utf8.count)
            let fast = Array(line.utf8).withUnsafeBytes { bytes in scratch.withUnsafeMutableBytes { NginxLine.scan(bytes, into: $0.baseAddress!) } }
            if let fast {
                #expect(fast.time.bitPattern == reference?.time.bitPattern && fast.time.bitPattern == Double(text)?.bitPattern, "\(text)")
                #expect(String(decoding: scratch[..<fast.reportLength], as: UTF8.self) == reference?.report, "\(text)")
            }
        }
    }
}
