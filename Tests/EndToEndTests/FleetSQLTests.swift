import Foundation
import Testing
import TestOrigin

/// One fleet's traffic (`FleetTraffic`), written in every log format: `cenariusd fleet` reads the same
/// counts from each, the query of `fleet --sql` gives them too in real engines from PyPI (DuckDB and
/// ClickHouse's chdb, installed by `make test-deps` into .build/sql-venv), and `fleet --counts` reads
/// the engines' results back and halts a rollout from them.
@Suite(.awaitsCleanups) struct FleetSQLTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let python: String = {
        let venv = root + "/.build/sql-venv/bin/python"
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/env"
    }()

    /// Whether the engine's Python module imports here. Outside CI a missing one skips its test, saying
    /// so; under CI=true `make test-deps` installs it, and the test runs and fails without it.
    static func has(_ module: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = (python.hasSuffix("env") ? ["python3"] : []) + ["-c", "import \(module)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    static let duckdb = has("duckdb")
    static let chdb = has("chdb")
    static let sqlglot = has("sqlglot")

    /// `releases` of `fleet --json` as the traffic's expected counts are keyed.
    static func releases(_ json: [String: Any]) -> [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        for release in json["releases"] as? [[String: Any]] ?? [] {
            guard let name = release["release"] as? String else { continue }
            out[name] = Dictionary(uniqueKeysWithValues: ["devices", "confirmed", "trial", "deferred", "held", "failed"].map { ($0, release[$0] as? Int ?? -1) })
        }
        return out
    }

    /// The bytes of `fleet --json` (per release with any, and in all) against the traffic's.
    /// A `fleet --json` run that counted `traffic` as it is known to be: devices, releases, why, bytes.
    static func expectCounts(_ run: Binary.Run, _ traffic: FleetTraffic, _ what: String) throws {
        #expect(run.status == 0, "\(what): \(run.stderr)")
        let json = try run.json()
        #expect(json["devices"] as? Int == traffic.devices, "\(what): \(run.stdout)")
        #expect(Self.releases(json) == traffic.expectedReleases, "\(what): \(run.stdout)")
        #expect(json["why"] as? [String: Int] == traffic.why, "\(what): \(run.stdout)")
        Self.expectBytes(json, traffic, what)
    }

    static func expectBytes(_ json: [String: Any], _ traffic: FleetTraffic, _ what: String) {
        var releases: [String: [Int64]] = [:]
        for release in json["releases"] as? [[String: Any]] ?? [] {
            let bytes = [release["peerBytes"], release["originBytes"]].map { ($0 as? NSNumber)?.int64Value ?? -1 }
            if let name = release["release"] as? String, bytes != [0, 0] { releases[name] = bytes }
        }
        #expect(releases == traffic.bytes.mapValues { [$0.peer, $0.origin] }, "\(what): \(releases)")
        let total = [json["peerBytes"], json["originBytes"]].map { ($0 as? NSNumber)?.int64Value ?? -1 }
        #expect(total == [traffic.bytes.values.map(\.peer).reduce(0, +), traffic.bytes.values.map(\.origin).reduce(0, +)] && total[0] > 0, "\(what): \(total)")
    }

    @Test func everyLogFormatGivesTheSameKnownCounts() throws {
        let traffic = FleetTraffic()
        let dir = try Scratch()
        defer { dir.remove() }
        for format in FleetTraffic.Format.allCases {
            let paths = try traffic.write(format, in: dir.path(format.rawValue))
            for threads in ["1", "2"] {
                let run = try Binary.run(["fleet", "--json", "--threads", threads] + paths)
                try Self.expectCounts(run, traffic, "\(format)")
            }
        }
    }

    @Test(.enabled(if: duckdb || Requirement.inCI, "DuckDB is not installed here (make test-deps puts it in .build/sql-venv): its counts are not checked"))
    func duckdbCountsAsFleetDoes() throws { try engineCounts("duckdb", result: "counts.json") }

    @Test(.enabled(if: chdb || Requirement.inCI, "chdb (ClickHouse in-process) is not installed here (make test-deps puts it in .build/sql-venv): its counts are not checked"))
    func clickhouseCountsAsFleetDoes() throws { try engineCounts("clickhouse", result: "counts.csv") }

    /// The engine runs `fleet --sql`'s query over the view of each format with a view (scripts/fleet-sql),
    /// writing its own result format; `fleet --counts` reads it back as the same counts.
    private func engineCounts(_ engine: String, result: String) throws {
        let traffic = FleetTraffic()
        let dir = try Scratch()
        defer { dir.remove() }
        // Every format but the Swift proxy's has its view; Fastly's lines are nginx's shape.
        let views: [(FleetTraffic.Format, String)] = [(.nginx, "nginx"), (.fastly, "nginx"), (.s3, "s3"), (.cloudfront, "cloudfront"),
                                                      (.realtime, "realtime"), (.logpush, "logpush")]
        for (format, view) in views {
            let paths = try traffic.write(format, in: dir.path(format.rawValue))
            let out = dir.path(format.rawValue + "-" + result)
            let script = Self.root + "/scripts/fleet-sql"
            let ran = try Binary.run((Self.python.hasSuffix("env") ? ["python3"] : []) + [script, Binary.path, engine, view, out] + paths,
                                     executable: Self.python)
            #expect(ran.status == 0, "\(engine) on \(format): \(ran.stderr)")
            try Self.expectCounts(try Binary.run(["fleet", "--counts", out, "--json"]), traffic, "\(engine) on \(format)")
        }
    }

    /// Athena cannot run here: its query and views are at least parsed as Athena's SQL (sqlglot's
    /// Athena dialect), so that a syntax error fails here. Function names are not checked by it.
    @Test(.enabled(if: sqlglot || Requirement.inCI, "sqlglot is not installed here (make test-deps puts it in .build/sql-venv): the Athena dialect is not parsed"))
    func theAthenaQueryAndViewsParseAsAthenasSQL() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        var files: [String] = []
        for view in ["", "nginx", "s3", "cloudfront", "realtime", "logpush"] {
            let run = try Binary.run(["fleet", "--sql", "athena"] + (view.isEmpty ? [] : ["--view", view]))
            #expect(run.status == 0 && run.stdout.contains(view.isEmpty ? "cenarius_lines" : "CREATE VIEW"), "\(run.stderr)")
            try dir.write("athena-\(view).sql", run.stdout)
            files.append(dir.path("athena-\(view).sql"))
        }
        let check = "import sqlglot, sys\nfor path in sys.argv[1:]:\n    sqlglot.parse_one(open(path).read(), read='athena', error_level=sqlglot.ErrorLevel.RAISE)\n"
        let parsed = try Binary.run((Self.python.hasSuffix("env") ? ["python3"] : []) + ["-c", check] + files, executable: Self.python)
        #expect(parsed.status == 0, "\(parsed.stderr)")
    }

    /// A fleet whose logs never leave the warehouse halts a failing rollout the same way: Athena's
    /// CSV (every field quoted) of the query's result.
    @Test func aRolloutHaltsFromAWarehousesCounts() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("site/index.html", "<h1>b</h1>")
        #expect(try Binary.run(["routes", dir.path("site"), "--release", "2026.11-b"]).status == 0)
        let traffic = FleetTraffic()
        var csv = #""kind","name","devices","confirmed","trial","deferred","held","failed""# + "\n"
        for (name, counts) in traffic.expectedReleases.sorted(by: { $0.key < $1.key }) {
            csv += (["release", name] + ["devices", "confirmed", "trial", "deferred", "held", "failed"].map { String(counts[$0]!) }).map { "\"\($0)\"" }.joined(separator: ",") + "\n"
        }
        for (code, devices) in traffic.why { csv += #""why","\#(code)","\#(devices)","0","0","0","0","0""# + "\n" }
        try dir.write("athena.csv", csv)
        // 2026.11-b: 45 devices on it, 30 gave it up: 40% of 75.
        let keep = try Binary.run(["fleet", "--counts", dir.path("athena.csv"), "--halt-above", "50", "--min-devices", "10", "--remote", dir.path("site")])
        #expect(keep.status == 0 && keep.stdout.contains("not halted: 40.0% of the 75 devices that tried 2026.11-b"), "\(keep.stdout)\(keep.stderr)")
        #expect(dir.read("site/Routes.json.release")?.contains(#""halted": true"#) == false)
        let halt = try Binary.run(["fleet", "--counts", dir.path("athena.csv"), "--halt-above", "20", "--min-devices", "10", "--remote", dir.path("site"), "--json"])
        #expect(halt.status == 0, "\(halt.stderr)")
        let verdict = try #require(try halt.json()["halt"] as? [String: Any], "\(halt.stdout)")
        #expect(verdict["halted"] as? Bool == true && verdict["tried"] as? Int == 75 && verdict["failed"] as? Int == 30, "\(verdict)")
        #expect(dir.read("site/Routes.json.release")?.contains(#""halted": true"#) == true)
        #expect(dir.read("site/Routes.head")?.contains(#"\"halted\": true"#) == true, "devices that poll the head see it")

        try dir.write("broken.csv", "kind,name,devices\nrelease,r1,many\n")
        let broken = try Binary.run(["fleet", "--counts", dir.path("broken.csv")])
        #expect(broken.status == 64 && broken.stderr.contains("row 1"), "\(broken.status) \(broken.stderr)")
        let both = try Binary.run(["fleet", dir.path("athena.csv"), "--counts", dir.path("athena.csv")])
        #expect(both.status == 64, "\(both.stderr)")
    }
}
