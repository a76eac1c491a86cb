import Foundation
import Fleet
import ReportHeader
import Testing

@Suite struct FleetReportTests {
    @Test func aReportRoundTripsThroughItsHeaderValue() throws {
        let report = FleetReport(device: "3f2a9c0d1e4b5a67", release: "2026.11-a", state: .trial, failed: ["2026.11-b"], native: "2.3.0")
        let value = try #require(report.headerValue())
        #expect(value == #"device="3f2a9c0d1e4b5a67", release="2026.11-a", state=trial, failed=("2026.11-b"), native="2.3.0""#)
        #expect(FleetReport(headerValue: Array(value.utf8)) == report)
        let bare = FleetReport(device: "d", release: "r", state: .confirmed)
        #expect(try #require(bare.headerValue()) == #"device="d", release="r", state=confirmed"#)
    }

    /// `why=` (docs/why.md): a token of a known code, read back; a code this version does not know is left out.
    @Test func theWhyCodeTravelsAsAToken() throws {
        let report = FleetReport(device: "d", release: "r", state: .deferred, why: .deferredMoment)
        let value = try #require(report.headerValue())
        #expect(value == #"device="d", release="r", state=deferred, why=deferred-moment"#)
        #expect(FleetReport(headerValue: Array(value.utf8)) == report)
        #expect(FleetReport(headerValue: Array(#"device="d", release="r", state=trial, why=later-code"#.utf8))?.why == nil)
        var tally = FleetTally()
        tally.add(report, at: 1)
        tally.add(FleetReport(device: "e", release: "r", state: .confirmed, why: .current), at: 1)
        tally.add(FleetReport(device: "e", release: "r", state: .confirmed, why: .originUnreachable), at: 2)
        tally.add(FleetReport(device: "f", release: "r", state: .confirmed), at: 1)
        #expect(tally.whyCounts() == ["deferred-moment": 1, "origin-unreachable": 1], "each device by its latest report")
    }

    /// `peer=` and `origin=` (docs/peers.md): integers, both or neither, read back; the first
    /// thing dropped when a report would pass its budget.
    @Test func bytesFromPeersAndOriginTravelAsIntegers() throws {
        var report = FleetReport(device: "d", release: "r", state: .confirmed)
        (report.peerBytes, report.originBytes) = (7_340_032, 1_024)
        let value = try #require(report.headerValue())
        #expect(value == #"device="d", release="r", state=confirmed, peer=7340032, origin=1024"#)
        #expect(FleetReport(headerValue: Array(value.utf8)) == report)
        #expect(FleetReport(headerValue: Array(#"device="d", release="r", state=trial, peer=5"#.utf8))?.peerBytes == nil)
        #expect(FleetReport(headerValue: Array(#"device="d", release="r", state=trial, peer=-5, origin=1"#.utf8))?.peerBytes == nil)
        var long = FleetReport(device: "d", release: String(repeating: "r", count: 200), state: .confirmed, failed: ["a"])
        (long.peerBytes, long.originBytes) = (999_999_999_999, 999_999_999_999)
        let longValue = try #require(long.headerValue())
        let fitted = try #require(FleetReport(headerValue: Array(longValue.utf8)))
        #expect(fitted.peerBytes == nil && fitted.failed == ["a"])
    }

    @Test func aReportNeverPassesItsByteBudget() throws {
        let long = String(repeating: "release-name-", count: 5)
        let report = FleetReport(device: "3f2a9c0d1e4b5a67", release: long, state: .confirmed,
                                 failed: (0..<10).map { "\(long)\($0)" }, native: "2.3.0", why: .originUnreachable)
        let value = try #require(report.headerValue())
        #expect(value.utf8.count <= FleetReport.maxBytes)
        let parsed = try #require(FleetReport(headerValue: Array(value.utf8)))
        #expect(parsed.release == long && parsed.failed.count < 4 && parsed.failed.first == "\(long)0")
        // A name that cannot fit at all sends nothing rather than a broken header.
        #expect(FleetReport(device: "d", release: String(repeating: "x", count: 300), state: .trial).headerValue() == nil)
        // Characters a structured string cannot hold are refused by the serializer, not sent.
        #expect(FleetReport(device: "d", release: "caf\u{e9}", state: .trial).headerValue() == nil)
    }

    @Test func foreignOrMalformedValuesAreNotReports() {
        for value in ["", "device=1", #"device="d", release="r", state=exploded"#, #"device="d", state=trial"#,
                      "garbage ((( \"", #"device="", release="r", state=trial"#, String(repeating: "a", count: 5000)] {
            #expect(FleetReport(headerValue: Array(value.utf8)) == nil, "\(value)")
        }
        // Unknown keys are ignored: later versions may say more.
        #expect(FleetReport(headerValue: Array(#"device="d", release="r", state=held, battery=42"#.utf8))?.state == .held)
    }

    /// An OpenStack Swift proxy logs the header percent-encoded among the others it was told to log.
    @Test func anObjectStoresProxyLineCarriesTheReport() throws {
        let line = "proxy: 127.0.0.1 127.0.0.1 26/Nov/2026/03/25/55 GET /v1/AUTH_test/site/app/Routes.head HTTP/1.0 304 - cenariusd/0.1.0 - - - - "
            + "tx9ee1 Cenarius-Report:%20device%3D%220093d9e4deb8f6f5%22%2C%20release%3D%22a1253aec6060f305%22%2C%20state%3Dconfirmed%2C%20why%3Dcurrent"
            + "%0AIf-None-Match:%20%22fd41%22 0.0143 - - 1795663555.054249763 1795663555.068515062 0"
        let parsed = try #require(AccessLog.parseLine(Array(line.utf8)[...]))
        #expect(parsed.time == 1795663555.054249763)
        #expect(parsed.report == #"device="0093d9e4deb8f6f5", release="a1253aec6060f305", state=confirmed, why=current"#)
        let report = try #require(FleetReport(headerValue: Array(parsed.report.utf8)))
        #expect(report.state == .confirmed)
        let withoutReport = "proxy: 127.0.0.1 127.0.0.1 26/Nov/2026/03/25/54 GET /v1/x HTTP/1.0 200 - curl - - 36 - tx - 0.0078 - - 1795663554.98 1795663554.99 0"
        #expect(AccessLog.parseLine(Array(withoutReport.utf8)[...]) == nil)
        // One percent-decoder for the project: `%+1` is no escape (`UInt8("+1", radix: 16)` would take it for 0x01).
        let signed = line.replacingOccurrences(of: "why%3Dcurrent", with: "why%3Dcurrent%+1")
        #expect(AccessLog.parseLine(Array(signed.utf8)[...]) == nil)
    }

    @Test func namesAreShortStableHashes() {
        #expect(FleetReport.releaseName(ofTable: Array("[]".utf8)).count == 16)
        // The first 16 hex digits of SHA-256("[]") (`printf '[]' | sha256sum`).
        #expect(FleetReport.releaseName(ofTable: Array("[]".utf8)) == "4f53cda18c2baa0c")
        #expect(FleetReport.deviceHash("machine-1") != FleetReport.deviceHash("machine-2"))
        #expect(!FleetReport.deviceHash("machine-1").contains("machine"))
    }
}

@Suite struct FleetTallyTests {
    func line(_ time: Double, _ report: FleetReport) -> ArraySlice<UInt8> {
        let header = report.headerValue()!.replacingOccurrences(of: "\"", with: "\\\"")
        return ArraySlice(Array(#"{"time":"\#(time)","report":"\#(header)"}"#.utf8))
    }

    @Test func eachDeviceCountsOnceByItsLatestReport() {
        var tally = FleetTally()
        tally.add(line: line(10, FleetReport(device: "a", release: "r2", state: .trial)))
        tally.add(line: line(20, FleetReport(device: "a", release: "r1", state: .confirmed, failed: ["r2"])))
        tally.add(line: line(15, FleetReport(device: "a", release: "r2", state: .confirmed)))  // older: ignored
        tally.add(line: line(12, FleetReport(device: "b", release: "r2", state: .confirmed)))
        tally.add(line: line(13, FleetReport(device: "c", release: "r1", state: .deferred)))
        tally.add(line: ArraySlice(Array(#"{"time":"14","report":""}"#.utf8)))
        tally.add(line: ArraySlice(Array("not json".utf8)))
        tally.add(line: ArraySlice(Array(#"{"time":"nan","report":"x"}"#.utf8)))
        #expect(tally.lines == 8 && tally.devices == 3 && tally.withoutReport == 1 && tally.malformed == 2)
        let releases = Dictionary(uniqueKeysWithValues: tally.releases().map { ($0.name, $0) })
        #expect(releases["r1"]?.confirmed == 1 && releases["r1"]?.deferred == 1 && releases["r1"]?.failed == 0)
        #expect(releases["r2"]?.confirmed == 1 && releases["r2"]?.failed == 1 && releases["r2"]?.tried == 2)
    }

    /// Peer and origin bytes are summed over each device's latest report, per release and in all,
    /// alike from nginx's lines (the fast path), a Swift proxy's (the library) and reports given whole.
    @Test func peerAndOriginBytesAreSummedOverLatestReports() {
        func report(_ device: String, _ release: String, _ peer: Int64?, _ origin: Int64?) -> FleetReport {
            var report = FleetReport(device: device, release: release, state: .confirmed)
            (report.peerBytes, report.originBytes) = (peer, origin)
            return report
        }
        var tally = FleetTally()
        tally.add(line: line(10, report("a", "r1", 100, 900)))
        tally.add(line: line(20, report("a", "r2", 7_000, 1_000)))  // a's latest
        tally.add(line: line(11, report("b", "r2", 3_000, 0)))
        tally.add(line: line(12, report("c", "r2", 50, 60)))
        tally.add(line: line(13, report("c", "r2", nil, nil)))  // c's latest says none: not counted
        tally.add(line: line(14, report("d", "r1", nil, nil)))
        let proxy = "proxy: 127.0.0.1 127.0.0.1 26/Nov/2026/03/25/55 GET /v1/x HTTP/1.0 200 - cenariusd/0.1.0 - - - - tx9ee1 Cenarius-Report:"
            + "%20device%3D%22e%22%2C%20release%3D%22r1%22%2C%20state%3Dtrial%2C%20peer%3D5%2C%20origin%3D6 0.0143 - - 1795663555.054249763 1795663555.068515062 0"
        tally.add(line: ArraySlice(Array(proxy.utf8)))
        tally.add(report("f", "r1", 1, 2), at: 16)
        let releases = Dictionary(uniqueKeysWithValues: tally.releases().map { ($0.name, $0) })
        #expect(releases["r2"]?.peerBytes == 10_000 && releases["r2"]?.originBytes == 1_000)
        #expect(releases["r1"]?.peerBytes == 6 && releases["r1"]?.originBytes == 8)
        #expect(tally.totalBytes() == PeerBytes(peer: 10_006, origin: 1_008) && tally.devicesWithBytes == 4 && tally.devices == 6 && tally.malformed == 0)
    }

    @Test func sinceLeavesOlderLinesOut() {
        var tally = FleetTally(since: 100)
        tally.add(line: line(50, FleetReport(device: "a", release: "r", state: .trial)))
        tally.add(line: line(150, FleetReport(device: "b", release: "r", state: .trial)))
        #expect(tally.devices == 1 && tally.beforeSince == 1)
    }

    @Test func theHaltRuleNeedsASampleAndAShare() {
        let rule = HaltRule(percent: 20, minDevices: 10)
        var release = FleetTally.Release(name: "r")
        release.confirmed = 7
        release.failed = 2
        #expect(rule.verdict(for: release) == .tooFewDevices(tried: 9))
        release.confirmed = 8
        #expect(rule.verdict(for: release) == .keep(failedPercent: 20))
        release.failed = 3
        #expect(rule.verdict(for: release) == .halt(failedPercent: 300.0 / 11))
        #expect(rule.verdict(for: nil) == .tooFewDevices(tried: 0))
    }

    @Test func gzipAndPlainLogsReadAlikeAndOverlongLinesAreSkipped() throws {
        let dir = NSTemporaryDirectory() + "cenarius-fleet-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var text = ""
        for i in 0..<1000 { text += String(decoding: line(Double(i), FleetReport(device: "d\(i % 7)", release: "r", state: .confirmed)), as: UTF8.self) + "\n" }
        text += String(repeating: "x", count: 200_000) + "\n" + "last line without newline"
        try text.write(toFile: dir + "/plain.log", atomically: true, encoding: .utf8)
        try (text + "\n").write(toFile: dir + "/ended.log", atomically: true, encoding: .utf8)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c \(dir)/plain.log > \(dir)/rotated.log.gz && gzip -c \(dir)/ended.log > \(dir)/e.gz && cat \(dir)/e.gz \(dir)/e.gz > \(dir)/twice.log.gz"]
        try gzip.run()
        gzip.waitUntilExit()
        for (name, copies) in [("plain.log", 1), ("rotated.log.gz", 1), ("twice.log.gz", 2)] {
            var tally = FleetTally()
            try AccessLog.forEachLine(of: dir + "/" + name) { tally.add(line: $0) }
            #expect(tally.lines == 1002 * copies && tally.malformed == 2 * copies && tally.devices == 7, "\(name)")
        }
        #expect(throws: (any Error).self) { try AccessLog.forEachLine(of: dir + "/missing.log") { _ in } }
    }

    @Test func devicesPastTheCapAreDroppedAndCountedAndNamesAreBoundedToo() {
        var tally = FleetTally(maxDevices: 3)
        for n in 0..<5 { tally.add(line: line(Double(n), FleetReport(device: "d\(n)", release: "r1", state: .confirmed))) }
        #expect(tally.devices == 3 && tally.droppedLines == 2)
        // A counted device is still followed.
        tally.add(line: line(10, FleetReport(device: "d0", release: "r2", state: .trial, failed: ["r1"])))
        #expect(tally.releases().first { $0.name == "r2" }?.trial == 1)
        #expect(tally.releases().first { $0.name == "r1" }?.failed == 1)
        // One device sending ever new release names cannot grow the names past their cap either.
        var names = FleetTally()
        let count = FleetTally.maxNames + 10
        for n in 0..<count { names.add(FleetReport(device: "one", release: "r\(n)", state: .confirmed), at: Double(n)) }
        #expect(names.devices == 1 && names.droppedLines == 10 && names.droppedForNames == 10)
        #expect(names.releases().map(\.name) == ["r\(FleetTally.maxNames - 1)"])
    }
}
