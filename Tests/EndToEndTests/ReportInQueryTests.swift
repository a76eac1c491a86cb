import Foundation
import Testing
import TestOrigin

/// `--report-in query` end to end: devices sync from nginx, which also writes an S3 server access
/// log (no request headers in it); the report is in the head poll's query string on the first poll
/// of each hour only, and `cenariusd fleet` counts the devices from that log.
@Suite(.awaitsCleanups) struct ReportInQueryTests {
    @Test func aLogWithoutHeadersCountsTheDevicesThatPutTheirReportInTheQuery() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        let site = origin.folder("site")
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        try "<h1>r1</h1>".write(toFile: site + "/index.html", atomically: true, encoding: .utf8)
        #expect(try Binary.run(["routes", site, "--release", "2026.11-a"]).status == 0)
        func sync(_ n: Int, _ extra: [String] = [], hoursLater: Int = 0) throws -> Binary.Run {
            try Device(cache: dir.path("cache\(n)"), preset: dir.path("preset"))
                .run(["sync", "--json", "--remote", origin.url(.good), "--cacert", origin.caFile, "--device-id", "kiosk-\(n)", "--native-version", "2.3.0"] + extra,
                      environment: hoursLater == 0 ? [:] : ["CENARIUS_CLOCK_OFFSET": String(hoursLater * 3600)])
        }
        let s3Log = origin.root + "/logs/s3.log"
        func queryLines() -> [Substring] {
            ((try? String(contentsOfFile: s3Log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains("cenarius-report=") }
        }
        // Three devices put their report in the URL, one keeps to the header.
        for n in 1...3 {
            let first = try sync(n, ["--report-in", "query"])
            #expect(first.status == 0 && (try? first.json()["outcome"] as? String) == "committed", "\(first.stdout)\(first.stderr)")
        }
        #expect(try sync(4).status == 0)
        #expect(queryLines().count == 3, "\(queryLines())")
        // Polls within the hour carry no query (a CDN keyed on it answers them from its cache); the next hour's first does.
        for n in 1...3 { #expect(try sync(n, ["--report-in", "query"]).status == 0) }
        #expect(queryLines().count == 3, "\(queryLines())")
        #expect(try sync(1, ["--report-in", "query"], hoursLater: 2).status == 0)
        let lines = queryLines()
        #expect(lines.count == 4, "\(lines)")
        // Only on the head's poll, and never the id, nor the host version, which the header carries.
        #expect(lines.allSatisfy { $0.contains("/site/Routes.head?cenarius-report=device%3D%22") && !$0.contains("kiosk") && !$0.contains("native") }, "\(lines)")
        let bad = try sync(5, ["--report-in", "url"])
        #expect(bad.status == 64 && bad.stderr.contains("--report-in must be header or query"), "\(bad.stderr)")

        let counted = try Binary.run(["fleet", s3Log, "--json"])
        #expect(counted.status == 0, "\(counted.stderr)")
        let json = try counted.json()
        #expect(json["devices"] as? Int == 3 && json["malformed"] as? Int == 0, "\(counted.stdout)")
        // Each device by its latest report in the URL: a first install's poll says `none` (nothing installed
        // yet); the one that polled again two hours later says the release it installed then.
        let releases = try #require(json["releases"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: releases.map { ($0["release"] as? String ?? "", $0["confirmed"] as? Int ?? -1) })
        #expect(byName == ["none": 2, "2026.11-a": 1], "\(releases)")
        // The nginx JSON log of the same polls has the header of all four.
        let headers = try Binary.run(["fleet", origin.root + "/logs/fleet.log", "--json"])
        #expect(try headers.json()["devices"] as? Int == 4, "\(headers.stdout)")
    }
}
