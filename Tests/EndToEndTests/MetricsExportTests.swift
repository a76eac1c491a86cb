import Foundation
import Testing
import TestOrigin

/// OTLP metrics with the built binary (docs/telemetry.md): the daemon sends the figures of
/// `GET /metrics` to a collector (the test origin taking POSTs on `v1/metrics`), every body
/// decoded with OpenTelemetry's own protocol definitions (scripts/otlp-decode); a collector that
/// hangs or is down changes nothing about a sync.
@Suite(.serialized) struct MetricsExportTests {
    /// Every data point of the newest export, by `name{key="value",…}` as `/metrics` writes it.
    static func newest(_ origin: TestOrigin) throws -> (points: [String: Double], metrics: [[String: Any]], resource: [String: String])? {
        guard let export = try TelemetryTests.exports(origin, path: "v1/metrics").last,
              let resourceMetrics = (export["resourceMetrics"] as? [[String: Any]])?.first else { return nil }
        let metrics = (resourceMetrics["scopeMetrics"] as? [[String: Any]] ?? []).flatMap { $0["metrics"] as? [[String: Any]] ?? [] }
        var points: [String: Double] = [:]
        for metric in metrics {
            let name = metric["name"] as? String ?? ""
            let data = (metric["sum"] ?? metric["gauge"]) as? [String: Any]
            for point in data?["dataPoints"] as? [[String: Any]] ?? [] {
                let labels = (point["attributes"] as? [[String: Any]] ?? []).map { pair in
                    "\(pair["key"] as? String ?? "")=\"\(((pair["value"] as? [String: Any])?["stringValue"] as? String) ?? "")\""
                }
                let key = labels.isEmpty ? name : "\(name){\(labels.joined(separator: ","))}"
                // int64 comes as a string in protobuf's JSON, a double as a number.
                points[key] = (point["asInt"] as? String).flatMap(Double.init) ?? point["asDouble"] as? Double ?? 0
            }
        }
        let resource = TelemetryTests.attributes((resourceMetrics["resource"] as? [String: Any])?["attributes"])
        return (points, metrics, resource)
    }

    /// `/metrics`' samples, by the text before the value; and its families' names.
    static func scrape(_ http: RawHTTP) throws -> (samples: [String: Double], families: Set<String>) {
        let text = String(decoding: try http.request("GET", "/metrics").body, as: UTF8.self)
        var samples: [String: Double] = [:]
        var families: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { families.insert(String(line.split(separator: " ")[2])) }
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        return (samples, families)
    }

    @Test func theDaemonSendsTheFiguresOfMetricsToTheCollector() async throws {
        let (origin, dir) = try await TelemetryTests.origin()
        defer { dir.remove() }
        origin.acceptPosts(on: "v1/metrics")
        // The standard variables alone: the base endpoint gives /v1/metrics (and /v1/traces).
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600", "--device-id", "kiosk-7-serial-A1B2"],
                                       cache: dir.path("cache"),
                                       environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": origin.url, "OTEL_METRIC_EXPORT_INTERVAL": "100",
                                                     "OTEL_SERVICE_NAME": "lobby-kiosk", "OTEL_EXPORTER_OTLP_HEADERS": "x-collector-key=k1"])
        let http = try daemon.waitUntilServing()
        try waitUntil(timeout: 20) { (try? Self.newest(origin))??.points["cenarius_syncs_total{outcome=\"committed\"}"] == 1 }
        let (scraped, families) = try Self.scrape(http)
        // An export that began after the scrape: nothing synced in between, so the figures agree.
        let before = origin.requests(for: "v1/metrics").count
        try waitUntil(timeout: 20) { origin.requests(for: "v1/metrics").count >= before + 2 }
        let export = try #require(try Self.newest(origin))
        let names = Set(export.metrics.compactMap { $0["name"] as? String })
        #expect(names == families, "only in /metrics: \(families.subtracting(names)); only exported: \(names.subtracting(families))")
        var compared = 0
        for (key, value) in scraped where !key.hasPrefix("cenarius_http_") && !key.hasPrefix("cenarius_table_age") {
            #expect(export.points[key] == value, "\(key): /metrics \(value), OTLP \(String(describing: export.points[key]))")
            compared += 1
        }
        #expect(compared > 20 && scraped["cenarius_fetched_bytes_total"] ?? 0 > 0, "\(compared) figures compared")
        for metric in export.metrics where metric["name"] as? String == "cenarius_syncs_total" {
            let sum = try #require(metric["sum"] as? [String: Any])
            #expect(sum["isMonotonic"] as? Bool == true && sum["aggregationTemporality"] as? String == "AGGREGATION_TEMPORALITY_CUMULATIVE")
        }
        #expect(export.metrics.contains { $0["name"] as? String == "cenarius_generation" && $0["gauge"] != nil })
        // The request durations' histogram: a bucket above every bound, counts adding up to its count.
        let histogram = try #require(export.metrics.first { $0["name"] as? String == "cenarius_http_request_duration_seconds" }?["histogram"] as? [String: Any])
        let point = try #require((histogram["dataPoints"] as? [[String: Any]])?.first)
        let buckets = (point["bucketCounts"] as? [String] ?? []).compactMap(Int.init)
        #expect(buckets.count == (point["explicitBounds"] as? [Double] ?? []).count + 1 && buckets.count > 1)
        #expect(buckets.reduce(0, +) == Int(point["count"] as? String ?? "") && buckets.reduce(0, +) > 0, "\(point)")
        // The traces' resource, the device's hash and not its id; the collector's header.
        #expect(export.resource["service.name"] == "lobby-kiosk" && export.resource["cenarius.channel"] == "default")
        #expect(export.resource["cenarius.device"]?.isEmpty == false && export.resource["cenarius.device"] != "kiosk-7-serial-A1B2")
        #expect(origin.requests(for: "v1/metrics").allSatisfy { $0.headers["x-collector-key"] == "k1" })
        #expect(daemon.terminate().status == 0)

        // OTEL_METRICS_EXPORTER=none: no metrics, traces still.
        origin.resetRequests()
        let none = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"], cache: dir.path("cache"),
                                     environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": origin.url, "OTEL_METRIC_EXPORT_INTERVAL": "50",
                                                   "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_METRICS_EXPORTER": "none"])
        _ = try none.waitUntilServing()
        try waitUntil(timeout: 20) { !origin.requests(for: "v1/traces").isEmpty }
        usleep(300_000)
        #expect(origin.requests(for: "v1/metrics").isEmpty)
        #expect(none.terminate().status == 0)
        await origin.shutdown()
    }

    /// The exporter hangs on the collector for 5 s at each try, on a thread of its own: a sync
    /// asked for meanwhile takes what it takes without one.
    @Test(arguments: ["hanging", "down"])
    func aCollectorThatHangsOrIsDownDoesNotSlowASync(_ collector: String) async throws {
        let (origin, dir) = try await TelemetryTests.origin()
        defer { dir.remove() }
        var endpoint = origin.url + "/v1/metrics"
        if collector == "down" { endpoint = Binary.downRemote + "/v1/metrics" } else { origin.inject(.stall, on: "v1/metrics") }
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--otlp-metrics-endpoint", endpoint], environment: ["OTEL_METRIC_EXPORT_INTERVAL": "20"])
        let http = try daemon.waitUntilServing()
        if collector == "hanging" { try waitUntil(timeout: 20) { !origin.requests(for: "v1/metrics").isEmpty } }
        for release in 2...4 {
            origin.publish(["index.html": "<h1>v\(release)</h1>"])
            let started = Date()
            let receipt = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
            let seconds = Date().timeIntervalSince(started)
            #expect(receipt["status"] as? String == "SUCCEED", "\(receipt)")
            #expect(seconds < 2, "\(collector): a sync took \(seconds) s")
        }
        #expect(try http.request("GET", "/metrics").status == 200)
        #expect(daemon.terminate().status == 0)
        await origin.shutdown()
    }

    /// SIGHUP names a collector for a daemon started without one, and takes it away again.
    @Test func aReloadTurnsTheExportsOnAndOff() async throws {
        let (origin, dir) = try await TelemetryTests.origin()
        defer { dir.remove() }
        origin.acceptPosts(on: "v1/metrics")
        let reloaded = try ReloadedDaemon(origin: origin, dir: dir, environment: ["OTEL_METRIC_EXPORT_INTERVAL": "50"])
        let (daemon, reload) = (reloaded.daemon, reloaded.reload)
        usleep(300_000)
        #expect(origin.requests(for: "v1/metrics").isEmpty)

        try reload(#"{"remote": "\#(origin.url)", "otlp-metrics-endpoint": "\#(origin.url)/v1/metrics"}"#)
        try waitUntil(timeout: 20) { ((try? Self.newest(origin))??.points["cenarius_syncs_total{outcome=\"unchanged\"}"] ?? 0) >= 1
            || ((try? Self.newest(origin))??.points["cenarius_syncs_total{outcome=\"not-modified\"}"] ?? 0) >= 1 }

        try reload(#"{"remote": "\#(origin.url)"}"#)
        usleep(300_000)
        let sent = origin.requests(for: "v1/metrics").count
        usleep(500_000)
        #expect(origin.requests(for: "v1/metrics").count == sent, "metrics went on after the reload took the collector away")
        #expect(daemon.terminate().status == 0)
        await origin.shutdown()
    }
}
