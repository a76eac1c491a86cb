import ReportHeader

/// The count `fleet --json` makes, as one SQL query a log warehouse runs where the logs are
/// (`fleet --sql`): over a table `cenarius_lines(unix_seconds DOUBLE, report VARCHAR)`, one row a
/// request, `report` the `Cenarius-Report` value as received (from the header, or the query
/// string's `cenarius-report` percent-decoded); `view(of:)` makes that table of each log format.
///
/// Its rows are `kind, name, devices, confirmed, trial, deferred, held, failed, peer_bytes,
/// origin_bytes`: per release (`kind` = `release`) the devices on it by state, the devices that gave
/// it up, and the bytes its devices took from LAN peers and from the origin (`peer=N, origin=M`), and
/// per `why` code (`kind` = `why`) the devices that report it, each device by its latest report; the
/// same counts as `fleet --json`'s `releases` and `why`, and what `fleet --counts` reads back.
/// No backslash and no single quote in any literal: every engine reads them alike.
package enum FleetSQL {
    package enum Engine: String, CaseIterable, Sendable {
        case duckdb, clickhouse, athena
    }

    /// `nginx` is every JSON-lines log of `time` and `report` (Fastly's in docs/fleet.md too).
    package enum Format: String, CaseIterable, Sendable {
        case nginx, s3, cloudfront, realtime, logpush
    }

    /// The table the query reads, and the one of raw log lines each view reads.
    package static let linesTable = "cenarius_lines"
    package static let rawTable = "cenarius_log"

    package static func query(_ engine: Engine) -> String {
        let d = Dialect(engine)
        func field(_ pattern: String) -> String { d.extract("report", "(?:^|[ ,])" + pattern) }
        let whys = WhyReason.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let states = FleetReport.State.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let stateSums = FleetReport.State.allCases.map { "sum(CASE WHEN state = '\($0.rawValue)' THEN 1 ELSE 0 END) AS \($0.rawValue)" }
        return """
            -- cenariusd fleet --sql \(engine.rawValue): per release, per state and per why code, each device by its
            -- latest report, as cenariusd fleet --json counts them (docs/fleet.md). Reads \(linesTable)(unix_seconds, report).
            WITH reports AS (
              SELECT unix_seconds,
                     \(field(#"device="([^"]*)""#)) AS device,
                     \(field(#"release="([^"]*)""#)) AS release_name,
                     \(field("state=([a-z]+)")) AS state,
                     \(field(#"failed=[(]([^)]*)[)]"#)) AS failed,
                     \(field("why=([a-z-]+)")) AS why,
                     \(d.bigint(field("peer=([0-9]+)"))) AS peer,
                     \(d.bigint(field("origin=([0-9]+)"))) AS origin
              FROM \(linesTable)
              WHERE \(d.matches("report", #"(?:^|[ ,])release=""#))
            ), latest AS (
              SELECT * FROM (
                SELECT *, row_number() OVER (PARTITION BY device ORDER BY unix_seconds DESC) AS newest
                FROM reports WHERE device <> '' AND state IN (\(states))
              ) AS ranked WHERE newest = 1
            ), gave_up AS (
              SELECT DISTINCT device, name FROM (\(d.failedNames)) AS named WHERE name <> release_name
            ), counts AS (
              SELECT 'release' AS kind, release_name AS name, count(*) AS devices,
                     \(stateSums.joined(separator: ",\n         ")),
                     0 AS failed,
                     -- A report says both or neither (docs/peers.md).
                     sum(CASE WHEN peer IS NOT NULL AND origin IS NOT NULL THEN peer ELSE 0 END) AS peer_bytes,
                     sum(CASE WHEN peer IS NOT NULL AND origin IS NOT NULL THEN origin ELSE 0 END) AS origin_bytes
              FROM latest GROUP BY release_name
              UNION ALL SELECT 'release', name, 0, 0, 0, 0, 0, count(*), 0, 0 FROM gave_up GROUP BY name
              UNION ALL SELECT 'why', why, count(*), 0, 0, 0, 0, 0, 0, 0 FROM latest WHERE why IN (\(whys)) GROUP BY why
            )
            SELECT kind, name, sum(devices) AS devices, sum(confirmed) AS confirmed, sum(trial) AS trial, sum(deferred) AS deferred,
                   sum(held) AS held, sum(failed) AS failed, sum(peer_bytes) AS peer_bytes, sum(origin_bytes) AS origin_bytes
            FROM counts GROUP BY kind, name ORDER BY kind, name

            """
    }

    /// `cenarius_lines` over `cenarius_log(line VARCHAR)`, the log's lines as they are (each engine
    /// loads text lines its own way; docs/fleet.md).
    package static func view(of format: Format, _ engine: Engine) -> String {
        let d = Dialect(engine)
        let select: String
        switch format {
        case .nginx:
            select = """
                SELECT \(d.jsonNumber("line", "time")) AS unix_seconds, \(d.jsonString("line", "report")) AS report
                FROM \(rawTable) WHERE \(d.isJSON("line"))
                """
        case .s3:
            // `owner bucket [06/Feb/2019:00:00:38 +0000] ip requester id operation key "GET /key?query HTTP/1.1" …`
            let time = d.extract("line", " [[]([0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4})")
            select = """
                SELECT \(d.s3Time(time)) AS unix_seconds,
                       \(d.urlDecode(d.extract("line", #"[?&]cenarius-report=([^& "]*)"#))) AS report
                FROM \(rawTable) WHERE line NOT LIKE '#%'
                """
        case .cloudfront:
            // W3C, tab-separated: date, time, …, the query string the 12th field (CloudFront's standard log).
            select = """
                SELECT \(d.w3cTime(d.field("line", 1), d.field("line", 2))) AS unix_seconds,
                       \(d.urlDecode(d.extract(d.field("line", 12), "(?:^|&)cenarius-report=([^&]*)"))) AS report
                FROM \(rawTable) WHERE line NOT LIKE '#%'
                """
        case .realtime:
            // Tab-separated, the unix time first; the report in cs-headers (percent-encoded `Name:value`
            // lines) or in the query string, wherever the configuration put them.
            let header = d.extract(d.urlDecode("line"), "(?i)(?:^|[[:cntrl:]])cenarius-report:[ ]*([^[:cntrl:]]*)")
            let query = d.urlDecode(d.extract("line", "(?:^|[[:cntrl:]&])cenarius-report=([^&[:cntrl:]]*)"))
            select = """
                SELECT \(d.double(d.field("line", 1))) AS unix_seconds,
                       CASE WHEN \(header) <> '' THEN \(header) ELSE \(query) END AS report
                FROM \(rawTable)
                """
        case .logpush:
            // EdgeStartTimestamp as a number (Logpush's timestamp_format unix, unixnano or unixmilli).
            let stamp = d.jsonNumber("line", "EdgeStartTimestamp")
            let header = d.jsonString("line", "RequestHeaders", "cenarius-report")
            let query = d.urlDecode(d.extract(d.jsonString("line", "ClientRequestURI"), "[?&]cenarius-report=([^&]*)"))
            select = """
                SELECT \(stamp) / (CASE WHEN \(stamp) > 1e17 THEN 1e9 WHEN \(stamp) > 1e14 THEN 1e6 WHEN \(stamp) > 1e11 THEN 1e3 ELSE 1 END) AS unix_seconds,
                       CASE WHEN \(header) <> '' THEN \(header) ELSE \(query) END AS report
                FROM \(rawTable) WHERE \(d.isJSON("line"))
                """
        }
        return "-- cenariusd fleet --sql \(engine.rawValue) --view \(format.rawValue): \(linesTable) from \(rawTable)(line), the lines of a log in that format as they are.\n"
            + "CREATE VIEW \(linesTable) AS\n" + select + "\n"
    }
}

/// Where the engines differ: the names of the same functions.
private struct Dialect {
    let engine: FleetSQL.Engine

    init(_ engine: FleetSQL.Engine) { self.engine = engine }

    /// The first group of `pattern` in `text`; empty (DuckDB, ClickHouse) or NULL (Athena) when it does not match.
    func extract(_ text: String, _ pattern: String) -> String {
        engine == .clickhouse ? "extract(\(text), '\(pattern)')" : "regexp_extract(\(text), '\(pattern)', 1)"
    }

    func matches(_ text: String, _ pattern: String) -> String {
        switch engine {
        case .duckdb: "regexp_matches(\(text), '\(pattern)')"
        case .clickhouse: "match(\(text), '\(pattern)')"
        case .athena: "regexp_like(\(text), '\(pattern)')"
        }
    }

    /// Each device's failed names, one row each (device, release_name, name).
    var failedNames: String {
        let names = #""([^"]*)""#
        switch engine {
        case .duckdb: return "SELECT device, release_name, unnest(regexp_extract_all(failed, '\(names)', 1)) AS name FROM latest"
        case .clickhouse: return "SELECT device, release_name, arrayJoin(extractAll(failed, '\(names)')) AS name FROM latest"
        case .athena: return "SELECT device, release_name, name FROM latest CROSS JOIN UNNEST(regexp_extract_all(failed, '\(names)', 1)) AS f (name)"
        }
    }

    /// Twice: a log that escapes `%` again (`device%253D…`) gives the report too, and a report holds no `%`.
    func urlDecode(_ text: String) -> String {
        engine == .clickhouse ? "decodeURLComponent(decodeURLComponent(\(text)))" : "url_decode(url_decode(\(text)))"
    }

    /// A JSON object's member as a number, whether written as one or as a string (nginx's `"$msec"`).
    func jsonNumber(_ json: String, _ key: String) -> String {
        engine == .clickhouse ? "JSONExtractFloat(\(json), '\(key)')" : "TRY_CAST(\(jsonString(json, key)) AS DOUBLE)"
    }

    /// A JSON object's member (or a member's member) as text, unescaped.
    func jsonString(_ json: String, _ key: String, _ inner: String? = nil) -> String {
        let path = "$." + key + (inner.map { "[\"\($0)\"]" } ?? "")
        switch engine {
        case .duckdb: return "json_extract_string(\(json), '$.\(key)" + (inner.map { ".\"\($0)\"" } ?? "") + "')"
        case .clickhouse: return "JSONExtractString(\(json), '\(key)'" + (inner.map { ", '\($0)'" } ?? "") + ")"
        case .athena: return "json_extract_scalar(\(json), '\(path)')"
        }
    }

    /// Digits as a 64-bit number; NULL when there are none (the field is not in the report).
    func bigint(_ text: String) -> String {
        engine == .clickhouse ? "toInt64OrNull(\(text))" : "TRY_CAST(\(text) AS BIGINT)"
    }

    func double(_ text: String) -> String {
        engine == .clickhouse ? "toFloat64OrNull(\(text))" : "TRY_CAST(\(text) AS DOUBLE)"
    }

    func isJSON(_ text: String) -> String {
        switch engine {
        case .duckdb: "json_valid(\(text))"
        case .clickhouse: "isValidJSON(\(text))"
        case .athena: "try(json_parse(\(text))) IS NOT NULL"
        }
    }

    /// The `n`th (from 1) tab-separated field.
    func field(_ text: String, _ n: Int) -> String {
        switch engine {
        case .duckdb: "string_split(\(text), chr(9))[\(n)]"
        case .clickhouse: "splitByChar(char(9), \(text))[\(n)]"
        case .athena: "split(\(text), chr(9))[\(n)]"
        }
    }

    /// `06/Feb/2019:00:00:38 +0000` as unix seconds.
    func s3Time(_ text: String) -> String {
        switch engine {
        case .duckdb: "epoch(strptime(\(text), '%d/%b/%Y:%H:%M:%S %z'))"
        case .clickhouse: "toFloat64(toUnixTimestamp(parseDateTimeBestEffort(replaceOne(\(text), ':', ' '))))"
        case .athena: "to_unixtime(parse_datetime(\(text), 'dd/MMM/yyyy:HH:mm:ss Z'))"
        }
    }

    /// W3C's `2019-12-04` and `21:02:31` (UTC) as unix seconds.
    func w3cTime(_ date: String, _ time: String) -> String {
        switch engine {
        case .duckdb: "epoch(CAST(\(date) || ' ' || \(time) AS TIMESTAMP))"
        case .clickhouse: "toFloat64(toUnixTimestamp(toDateTime(concat(\(date), ' ', \(time)), 'UTC')))"
        case .athena: "to_unixtime(CAST(concat(\(date), ' ', \(time)) AS timestamp))"
        }
    }
}
