import Foundation
import Fleet
import ReportHeader
import Testing

/// Reading logs in chunks on several threads gives exactly the counts of reading every line in
/// turn, and those of the tally as it was (`ReferenceTally`).
@Suite struct FleetReadingTests {
    /// A log with what makes chunked reading hard: times out of order, a device's latest report far
    /// from its others, lines of every kind (no report, malformed, another key order, escapes, a
    /// Swift proxy's line, empty lines), failed lists, ties in time, no newline at the end.
    static func log(lines count: Int, devices: Int, seed: UInt64 = 7) -> String {
        var rng = SplitMix(seed: seed)
        let releases = ["2026.10-c", "2026.11-a", "2026.11-b", "2026.11-c"]
        let whys: [WhyReason?] = [nil, .current, .heldBack, .deferredMoment, .trial]
        var text = ""
        for n in 0..<count {
            let device = "d\(rng.next() % UInt64(devices))"
            // Mostly increasing, with jumps back of up to a minute, and some equal times.
            let time = 1_764_000_000 + Double(n) * 0.25 - Double(rng.next() % 4 == 0 ? rng.next() % 60 : 0) + (n % 50 == 0 ? 0.5 : 0)
            let release = releases[Int(rng.next() % 4)]
            let failed = rng.next() % 5 == 0 ? [releases[Int(rng.next() % 4)]] + (rng.next() % 3 == 0 ? [releases[Int(rng.next() % 4)], "2026.09-z"] : []) : []
            let state = FleetReport.State.allCases[Int(rng.next() % 4)]
            let header = FleetReport(device: device, release: release, state: state, failed: failed, native: rng.next() % 2 == 0 ? "2.3.0" : nil,
                                     why: whys[Int(rng.next() % 5)]).headerValue()!
            let escaped = header.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            let stamp = String(format: "%.3f", time)
            switch rng.next() % 40 {
            case 0: text += #"{"time":"\#(stamp)","report":""}"#
            case 1: text += #"{"time":"\#(stamp)","report":"-"}"#
            case 2: text += "not json at all"
            case 3: text += ""
            case 4: text += #"{"report":"\#(escaped)","time":\#(stamp)}"#                      // other key order
            case 5: text += #"{"time":"\#(stamp)","report":"\#(escaped.replacingOccurrences(of: "release", with: "\\u0072elease"))"}"#
            case 6: text += #"{"time":"\#(stamp)","report":"device=\"\#(device)\", release=\"a\\\\\\\"b\", state=trial"}"#  // a release named a\"b
            case 7: text += #"{"time":"\#(stamp)","report":"device=\"\#(device)\",release=\"2026.11-a\";x=1,  state=held,"}"#  // not a report (trailing comma)
            case 8: text += #"{"time":"\#(stamp)","report":"  device=\"\#(device)\",\trelease=2026.11-b ,state=deferred, failed=( \"2026.11-a\"  \"2026.11-a\" )"}"#
            case 9: text += "proxy: 127.0.0.1 127.0.0.1 26/Nov/2026/03/25/55 GET /v1/AUTH_test/site/app/Routes.head HTTP/1.0 304 - cenariusd/0.1.0 - - - - tx9ee1 Cenarius-Report:%20"
                + header.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + " 0.0143 - - \(stamp) \(stamp) 0"
            default: text += #"{"time":"\#(stamp)","report":"\#(escaped)"}"#
            }
            if n < count - 1 { text += "\n" }
        }
        return text
    }

    struct Counts: Equatable, CustomStringConvertible {
        var lines, malformed, withoutReport, beforeSince, droppedLines, devices: Int
        var releases: [FleetTally.Release]
        var why: [String: Int]
        var newest: String?
        var notOnNewest: Int
        var notOnNewestWhy: [String: Int]
        var description: String { "\(lines) lines, \(devices) devices, \(malformed) malformed, \(droppedLines) dropped, newest \(newest ?? "-"): \(releases)" }

        init(_ t: FleetTally) {
            let not = t.notOnNewest()
            self.init(lines: t.lines, malformed: t.malformed, withoutReport: t.withoutReport, beforeSince: t.beforeSince, droppedLines: t.droppedLines,
                      devices: t.devices, releases: t.releases(), why: t.whyCounts(), newest: not?.release, notOnNewest: not?.devices ?? 0, notOnNewestWhy: not?.why ?? [:])
        }

        init(_ t: ReferenceTally) {
            let not = t.notOnNewest()
            self.init(lines: t.lines, malformed: t.malformed, withoutReport: t.withoutReport, beforeSince: t.beforeSince, droppedLines: t.droppedLines,
                      devices: t.latest.count, releases: t.releases(), why: t.whyCounts(), newest: not?.release, notOnNewest: not?.devices ?? 0, notOnNewestWhy: not?.why ?? [:])
        }

        init(lines: Int, malformed: Int, withoutReport: Int, beforeSince: Int, droppedLines: Int, devices: Int, releases: [FleetTally.Release],
             why: [String: Int], newest: String?, notOnNewest: Int, notOnNewestWhy: [String: Int]) {
            (self.lines, self.malformed, self.withoutReport, self.beforeSince, self.droppedLines, self.devices) = (lines, malformed, withoutReport, beforeSince, droppedLines, devices)
            (self.releases, self.why, self.newest, self.notOnNewest, self.notOnNewestWhy) = (releases, why, newest, notOnNewest, notOnNewestWhy)
        }
    }

    static func reference(_ text: String, since: Double? = nil, maxDevices: Int = 1 << 30) -> Counts {
        var tally = ReferenceTally(since: since, maxDevices: maxDevices)
        // As a log is read: a last newline ends the last line, it does not start an empty one.
        for line in (text.hasSuffix("\n") ? text.dropLast() : text[...]).split(separator: "\n", omittingEmptySubsequences: false) {
            tally.add(line: Array(line.utf8)[...])
        }
        return Counts(tally)
    }

    static func read(_ paths: [String], threads: Int, chunk: Int, since: Double? = nil, maxDevices: Int = 1 << 30) throws -> Counts {
        var reading = FleetReading(threads: threads)
        reading.chunkBytes = chunk
        return Counts(try reading.tally(paths, since: since, maxDevices: maxDevices))
    }

    @Test func chunksOnSeveralThreadsCountAsEveryLineInTurn() throws {
        let dir = try TemporaryFolder()
        let text = Self.log(lines: 6000, devices: 400)
        try text.write(toFile: dir.path("a.log"), atomically: true, encoding: .utf8)
        let expected = Self.reference(text)
        #expect(expected.devices > 300 && expected.malformed > 100 && expected.withoutReport > 100, "\(expected)")
        // Line by line through the tally's own reader, then whole files in chunks: one big chunk;
        // chunks shorter than some lines (every line crosses a boundary); several threads.
        var lineByLine = FleetTally()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { lineByLine.add(line: Array(line.utf8)[...]) }
        #expect(Counts(lineByLine) == expected)
        for (threads, chunk) in [(1, 1 << 20), (1, 97), (2, 1 << 20), (2, 4096), (3, 150), (4, 1)] {
            #expect(try Self.read([dir.path("a.log")], threads: threads, chunk: chunk) == expected, "\(threads) threads, chunks of \(chunk) bytes")
        }
    }

    @Test func severalFilesAndGzipReadAsOneLog() throws {
        let dir = try TemporaryFolder()
        let first = Self.log(lines: 2000, devices: 150, seed: 1), second = Self.log(lines: 2000, devices: 150, seed: 2)
        try first.write(toFile: dir.path("1.log"), atomically: true, encoding: .utf8)
        try second.write(toFile: dir.path("2.log"), atomically: true, encoding: .utf8)
        try dir.shell("gzip -c 2.log > 2.log.gz && gzip -c 1.log > m.gz && gzip -c 2.log >> m.gz")
        let expected = Self.reference(first + "\n" + second)
        for threads in [1, 2] {
            #expect(try Self.read([dir.path("1.log"), dir.path("2.log.gz")], threads: threads, chunk: 1000) == expected)
        }
        // Two gzip members in one file are one stream, as zcat gives it (the first lacks its last newline).
        #expect(try Self.read([dir.path("m.gz")], threads: 2, chunk: 512) == Self.reference(first + second))
        #expect(throws: (any Error).self) { try Self.read([dir.path("missing.log")], threads: 2, chunk: 512) }
    }

    @Test func overlongLinesAreOneMalformedLineEach() throws {
        let dir = try TemporaryFolder()
        let good = #"{"time":"5","report":"device=\"d\", release=\"r\", state=confirmed"}"#
        let text = [good, String(repeating: "x", count: 300), good, String(repeating: "y", count: 5000), good, String(repeating: "z", count: 999)].joined(separator: "\n")
        try text.write(toFile: dir.path("long.log"), atomically: true, encoding: .utf8)
        for (threads, chunk) in [(1, 64), (2, 1000), (1, 1 << 20)] {
            var reading = FleetReading(threads: threads)
            reading.chunkBytes = chunk
            reading.maxLine = 200
            let tally = try reading.tally([dir.path("long.log")], since: nil, maxDevices: 10)
            #expect(tally.lines == 6 && tally.malformed == 3 && tally.devices == 1, "\(threads), \(chunk): \(tally.lines) lines, \(tally.malformed) malformed")
        }
    }

    /// A flood of forged ids after the real devices: the real ones stay counted, with their later
    /// reports; the flood's lines past the cap are counted as dropped, on one thread or several.
    @Test func aForgedFloodNeitherGrowsPastTheCapNorPushesRealDevicesOut() throws {
        let dir = try TemporaryFolder()
        func line(_ time: Int, _ device: String, _ release: String, _ failed: String = "") -> String {
            #"{"time":"\#(time)","report":"device=\"\#(device)\", release=\"\#(release)\", state=confirmed\#(failed)"}"#
        }
        var lines = (0..<50).map { line(1000 + $0, "real-\($0)", "r1") }
        lines += (0..<5000).map { line(2000 + $0, String(format: "%016x", $0 * 7919), "r1") }
        lines += (0..<50).map { line(9000 + $0, "real-\($0)", $0 < 10 ? "r1" : "r2", $0 < 10 ? #", failed=(\"r2\")"# : "") }
        let text = lines.joined(separator: "\n") + "\n"
        try text.write(toFile: dir.path("flood.log"), atomically: true, encoding: .utf8)
        let expected = Self.reference(text, maxDevices: 60)
        #expect(expected.devices == 60 && expected.droppedLines == 4990)
        let r2 = try #require(expected.releases.first { $0.name == "r2" })
        #expect(r2.confirmed == 40 && r2.failed == 10, "every real device by its latest report")
        for (threads, chunk) in [(1, 1 << 20), (2, 700), (3, 4096)] {
            let counts = try Self.read([dir.path("flood.log")], threads: threads, chunk: chunk, maxDevices: 60)
            #expect(counts == expected, "\(threads) threads: \(counts) against \(expected)")
        }
    }

    /// `--since`: older lines are counted as such, and their reports are not even parsed (a broken
    /// one is not counted as malformed).
    @Test func sinceSkipsOlderLinesWithoutReadingTheirReports() throws {
        let dir = try TemporaryFolder()
        let text = Self.log(lines: 3000, devices: 200, seed: 3)
            + "\n" + #"{"time":"10","report":"this is no report"}"# + "\n" + #"{"time":"10","report":"device=\"x\", release=\"r\", state=trial"}"#
        try text.write(toFile: dir.path("since.log"), atomically: true, encoding: .utf8)
        let since = 1_764_000_000 + 400.0
        let expected = Self.reference(text, since: since)
        let all = Self.reference(text)
        #expect(expected.beforeSince > 1000 && expected.devices < all.devices, "\(expected)")
        #expect(expected.malformed < all.malformed, "the old broken report is before --since: not read, not malformed")
        for threads in [1, 2] {
            #expect(try Self.read([dir.path("since.log")], threads: threads, chunk: 2000, since: since) == expected)
        }
    }
}

/// Deterministic pseudo-random numbers for generated logs.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A folder removed when the test ends.
final class TemporaryFolder {
    let root: String
    init() throws {
        root = NSTemporaryDirectory() + "cenarius-fleet-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: root) }
    func path(_ name: String) -> String { root + "/" + name }
    func shell(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "cd \(root) && \(command)"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(command)")
    }
}
