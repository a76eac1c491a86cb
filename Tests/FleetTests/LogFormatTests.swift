import Foundation
import Fleet
import ReportHeader
import Testing

/// Logs that keep no request headers carry the report in the query string (`cenarius-report=`):
/// the same traffic as nginx JSON, as an S3 server access log and as a CloudFront standard log,
/// gives the same counts; each file's format is told from its first lines.
@Suite struct LogFormatTests {
    struct Request {
        var time: Int
        var header: String?
    }

    static func traffic(_ count: Int, seed: UInt64) -> [Request] {
        var rng = SplitMix(seed: seed)
        let releases = ["2026.11-a", "2026.11-b", "2026.11-c"]
        return (0..<count).map { n in
            // Increasing by the second, with some lines a minute late; one in twelve without a report.
            let time = 1_764_000_000 + n * 3 - (rng.next() % 6 == 0 ? Int(rng.next() % 60) : 0)
            guard rng.next() % 12 != 0 else { return Request(time: time, header: nil) }
            let failed = rng.next() % 4 == 0 ? [releases[Int(rng.next() % 3)]] : []
            var report = FleetReport(device: String(format: "%016x", rng.next() % 90), release: releases[Int(rng.next() % 3)],
                                     state: FleetReport.State.allCases[Int(rng.next() % 4)], failed: failed, native: "2.3.0",
                                     why: [WhyReason.current, .heldBack, .trial][Int(rng.next() % 3)])
            // One in three took bytes from peers: every reader must sum them alike.
            if n % 3 == 0 { (report.peerBytes, report.originBytes) = (Int64(n) * 1000, Int64(n)) }
            return Request(time: time, header: report.headerValue())
        }
    }

    static func nginx(_ requests: [Request]) -> String {
        requests.map { r in
            let header = (r.header ?? "").replacingOccurrences(of: "\"", with: "\\\"")
            return #"{"time":"\#(r.time).000","report":"\#(header)"}"#
        }.joined(separator: "\n") + "\n"
    }

    static func query(_ header: String?) -> String? {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return header.map { "cenarius-report=" + $0.addingPercentEncoding(withAllowedCharacters: allowed)! }
    }

    static func date(_ time: Int, _ format: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(time)))
    }

    /// Amazon's documented example line, with the device's poll of the head in it.
    static func s3(_ requests: [Request]) -> String {
        let owner = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
        return requests.enumerated().map { n, r in
            let target = "/awsexamplebucket1/site/Routes.head" + (Self.query(r.header).map { "?tag=\(n)&" + $0 } ?? "")
            return "\(owner) awsexamplebucket1 [\(date(r.time, "dd/MMM/yyyy:HH:mm:ss")) +0000] 192.0.2.3 \(owner) 3E57427F3EXAMPLE REST.GET.OBJECT site/Routes.head "
                + "\"GET \(target) HTTP/1.1\" 200 - 113 113 7 - \"-\" \"cenariusd/0.1.0\" - s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= "
                + "SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader awsexamplebucket1.s3.us-west-1.amazonaws.com TLSV1.2 - -"
        }.joined(separator: "\n") + "\n"
    }

    static func cloudFront(_ requests: [Request]) -> String {
        let fields = "date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type"
        return "#Version: 1.0\n#Fields: \(fields)\n" + requests.map { r in
            [date(r.time, "yyyy-MM-dd"), date(r.time, "HH:mm:ss"), "LAX1-C3", "392", "192.0.2.100", "GET", "d111111abcdef8.cloudfront.net",
             "/site/Routes.head", "304", "-", "cenariusd/0.1.0", Self.query(r.header) ?? "-", "-", "Hit"].joined(separator: "\t")
        }.joined(separator: "\n") + "\n"
    }

    @Test func eachFileIsToldByItsFirstLines() throws {
        let requests = Self.traffic(5, seed: 1)
        let cases: [(String, LogFormat)] = [
            (Self.nginx(requests), .lines), (Self.s3(requests), .s3), (Self.cloudFront(requests), .cloudFront(date: 0, time: 1, query: 11)),
            ("proxy: 127.0.0.1 127.0.0.1 26/Nov/2026/03/25/55 GET /v1/x HTTP/1.0 304 - cenariusd/0.1.0 - - - -\n", .lines),
            ("#Version: 1.0\n#Fields: date time cs-uri-stem\n", .lines), ("", .lines),
            // CloudFront real-time: the unix time with milliseconds, then a tab; a time alone is not one.
            ("1764000000.125\t192.0.2.1\t200\tGET\t/site/Routes.head\t-\n", .cloudFrontRealtime), ("1764000000\t192.0.2.1\n", .lines),
            (#"{"ClientIP":"192.0.2.1","EdgeStartTimestamp":1764000000000000000,"RequestHeaders":{}}"# + "\n", .lines),
        ]
        for (text, format) in cases {
            #expect(Array(text.utf8).withUnsafeBytes { LogFormat.detect($0) } == format, "\(text.prefix(80))")
        }
    }

    @Test func theSameTrafficCountsTheSameInEveryFormat() throws {
        let dir = try TemporaryFolder()
        let requests = Self.traffic(3000, seed: 5)
        try Self.nginx(requests).write(toFile: dir.path("nginx.log"), atomically: true, encoding: .utf8)
        try Self.s3(requests).write(toFile: dir.path("s3.log"), atomically: true, encoding: .utf8)
        try Self.cloudFront(requests).write(toFile: dir.path("cf.log"), atomically: true, encoding: .utf8)
        try dir.shell("gzip -k cf.log")
        let expected = try FleetReadingTests.read([dir.path("nginx.log")], threads: 1, chunk: 1 << 20)
        #expect(expected.lines == 3000 && expected.withoutReport > 100 && expected.malformed == 0 && expected.devices == 90, "\(expected)")
        #expect(expected.releases.contains { $0.peerBytes > 0 && $0.originBytes > 0 }, "\(expected)")
        for name in ["s3.log", "cf.log", "cf.log.gz"] {
            for (threads, chunk) in [(1, 1 << 20), (2, 700)] {
                #expect(try FleetReadingTests.read([dir.path(name)], threads: threads, chunk: chunk) == expected, "\(name), \(threads) threads")
            }
        }
        // Their times are read right: --since splits them where it splits nginx's.
        let since = Double(1_764_000_000 + 4500)
        let recent = try FleetReadingTests.read([dir.path("nginx.log")], threads: 1, chunk: 1 << 20, since: since)
        #expect(recent.beforeSince > 1000 && recent.beforeSince < 2000)
        for name in ["s3.log", "cf.log"] {
            #expect(try FleetReadingTests.read([dir.path(name)], threads: 2, chunk: 4096, since: since) == recent, "\(name)")
        }
        // The three in one run, each told by its own first lines.
        let all = try FleetReadingTests.read([dir.path("cf.log.gz"), dir.path("nginx.log"), dir.path("s3.log")], threads: 2, chunk: 4096)
        #expect(all.lines == 9000 && all.devices == 90 && all.malformed == 0)
    }

    /// A pipe (`fleet <(zcat …)`) cannot be read from its start twice: it is told by its first chunk.
    @Test func pipesAreReadAndToldToo() throws {
        let dir = try TemporaryFolder()
        let requests = Self.traffic(500, seed: 9)
        try Self.cloudFront(requests).write(toFile: dir.path("cf.log"), atomically: true, encoding: .utf8)
        try Self.nginx(requests).write(toFile: dir.path("nginx.log"), atomically: true, encoding: .utf8)
        try dir.shell("gzip -k cf.log && mkfifo plain.pipe gz.pipe")
        // Writers on threads of their own: opening a pipe to write waits for its reader.
        for (pipe, file) in [("plain.pipe", "cf.log"), ("gz.pipe", "cf.log.gz")] {
            let data = try Data(contentsOf: URL(fileURLWithPath: dir.path(file)))
            let path = dir.path(pipe)
            Thread {
                // A blocking open (FileHandle's may give up when no reader is there yet, and the
                // reader then waits for a writer that never comes).
                let fd = open(path, O_WRONLY)
                guard fd >= 0 else { return }
                defer { close(fd) }
                data.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                        if n <= 0 { return }
                        offset += n
                    }
                }
            }.start()
        }
        let expected = try FleetReadingTests.read([dir.path("nginx.log")], threads: 1, chunk: 1 << 20)
        #expect(try FleetReadingTests.read([dir.path("plain.pipe")], threads: 2, chunk: 1 << 20) == expected)
        #expect(try FleetReadingTests.read([dir.path("gz.pipe")], threads: 1, chunk: 1 << 20) == expected)
    }

    @Test func brokenLinesAreMalformedAndPollsWithoutAReportAreCountedAsSuch() throws {
        let dir = try TemporaryFolder()
        let requests = [Request(time: 1_764_000_000, header: #"device="d", release="r", state=trial"#), Request(time: 1_764_000_001, header: nil)]
        var s3 = Self.s3(requests)
        s3 += s3.split(separator: "\n")[0].replacingOccurrences(of: "+0000]", with: "+0000") + "\n"      // no end to the time
        s3 += s3.split(separator: "\n")[0].replacingOccurrences(of: "cenarius-report=", with: "cenarius-report=%G1") + "\n"  // a broken escape
        try s3.write(toFile: dir.path("s3.log"), atomically: true, encoding: .utf8)
        let counts = try FleetReadingTests.read([dir.path("s3.log")], threads: 1, chunk: 1 << 20)
        #expect(counts.lines == 4 && counts.devices == 1 && counts.withoutReport == 1 && counts.malformed == 2, "\(counts)")
    }
}
