import Foundation
import Testing
import TestOrigin

/// Traces with the built binary (docs/telemetry.md): a sync sent to a collector (the test origin
/// taking POSTs on `v1/traces`) as one trace, every body decoded with OpenTelemetry's own protocol
/// definitions (scripts/otlp-decode, opentelemetry-proto from PyPI); the origin's requests carry
/// the trace's `traceparent`; no secret in any exported byte; a collector down, failing or
/// hanging changes nothing about the sync.
@Suite(.serialized) struct TelemetryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent(".build/otlp-venv/bin/python").path

    /// Each export the collector took, decoded: ExportTraceServiceRequest as JSON (ids in hex), or
    /// ExportMetricsServiceRequest for `v1/metrics`.
    static func exports(_ origin: TestOrigin, path: String = "v1/traces") throws -> [[String: Any]] {
        let bodies = origin.requests(for: path).filter { $0.method == "POST" }.map(\.body)
        guard !bodies.isEmpty else { return [] }
        let dir = try Scratch()
        defer { dir.remove() }
        var files: [String] = []
        for (index, body) in bodies.enumerated() {
            files.append(dir.path("export-\(index)"))
            try Data(body).write(to: URL(fileURLWithPath: files[index]))
        }
        let run = try Binary.run([root.appendingPathComponent("scripts/otlp-decode").path] + files, executable: python)
        try #require(run.status == 0, "opentelemetry-proto refused an export (make otlp-deps installs it): \(run.stderr)")
        return try run.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// Every span of every export, with its resource's attributes.
    static func spans(_ exports: [[String: Any]]) -> [(span: [String: Any], resource: [String: String])] {
        exports.flatMap { export in
            (export["resourceSpans"] as? [[String: Any]] ?? []).flatMap { resourceSpans in
                let resource = attributes((resourceSpans["resource"] as? [String: Any])?["attributes"])
                return (resourceSpans["scopeSpans"] as? [[String: Any]] ?? []).flatMap { scope in
                    (scope["spans"] as? [[String: Any]] ?? []).map { (span: $0, resource: resource) }
                }
            }
        }
    }

    /// OTLP's key-value list as strings (ints come as strings in JSON too).
    static func attributes(_ list: Any?) -> [String: String] {
        var out: [String: String] = [:]
        for pair in list as? [[String: Any]] ?? [] {
            guard let key = pair["key"] as? String, let value = pair["value"] as? [String: Any], let first = value.values.first else { continue }
            out[key] = "\(first)"
        }
        return out
    }

    static func origin() async throws -> (TestOrigin, Scratch) {
        let origin = try await TestOrigin()
        origin.publish(["index.html": "<h1>v1</h1>", "app.js": "console.log(1)"])
        origin.acceptPosts(on: "v1/traces")
        return (origin, try Scratch())
    }

    static func sync(_ origin: TestOrigin, _ dir: Scratch, _ extra: [String] = [], environment: [String: String] = [:]) throws -> Binary.Run {
        try Device(in: dir).run(["sync", "--json", "--remote", origin.url, "--device-id", "kiosk-7-serial-A1B2"] + extra, environment: environment)
    }

    @Test func eachSyncIsOneTraceWhoseIdTheOriginSawOnEveryRequest() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        let endpoint = ["--otlp-endpoint", origin.url + "/v1/traces"]
        let first = try Self.sync(origin, dir, endpoint)
        #expect(first.status == 0, "\(first.stderr)")
        let requests = origin.requests.filter { $0.path != "v1/traces" }
        origin.publish(["index.html": "<h1>v2</h1>", "app.js": "console.log(1)"])
        let second = try Self.sync(origin, dir, endpoint)
        #expect(second.status == 0, "\(second.stderr)")
        // An unchanged poll is a trace too, of the poll alone.
        let third = try Self.sync(origin, dir, endpoint)
        #expect(third.status == 0, "\(third.stderr)")

        let spans = Self.spans(try Self.exports(origin))
        let allRoots = spans.filter { $0.span["name"] as? String == "cenarius.sync" }
        try #require(allRoots.count == 3, "one root span a sync: \(spans.map { $0.span["name"] ?? "?" })")
        let unchanged = allRoots[2]
        #expect(["not-modified", "unchanged"].contains(Self.attributes(unchanged.span["attributes"])["cenarius.outcome"] ?? ""))
        #expect(!spans.contains { $0.span["name"] as? String == "cenarius.stage" && $0.span["traceId"] as? String == unchanged.span["traceId"] as? String })
        let roots = Array(allRoots.prefix(2))
        let traces = roots.map { $0.span["traceId"] as? String ?? "" }
        #expect(Set(traces).count == 2 && traces.allSatisfy { $0.count == 32 })
        for root in roots {
            let attributes = Self.attributes(root.span["attributes"])
            #expect(attributes["cenarius.outcome"] == "committed")
            #expect(attributes["cenarius.channel"] == "default")
            #expect(root.span["parentSpanId"] == nil)
            let children = spans.filter { $0.span["parentSpanId"] as? String == root.span["spanId"] as? String }.compactMap { $0.span["name"] as? String }
            #expect(Set(children).isSuperset(of: ["cenarius.offer", "cenarius.stage", "cenarius.switch"]), "\(children)")
            // The resource names the device by its hash, never its id.
            #expect(root.resource["service.name"] == "cenariusd")
            #expect(root.resource["cenarius.device"]?.count == 16 && root.resource["cenarius.device"] != "kiosk-7-serial-A1B2")
        }
        let stage = try #require(spans.first { $0.span["name"] as? String == "cenarius.download.files" && $0.span["traceId"] as? String == traces[0] })
        #expect(Int(Self.attributes(stage.span["attributes"])["cenarius.bytes.fetched"] ?? "") ?? 0 > 0)
        // The first sync's every request to the origin carried its trace.
        #expect(!requests.isEmpty)
        for request in requests {
            let parent = try #require(request.headers["traceparent"], "\(request.path) went without traceparent")
            #expect(parent.hasPrefix("00-\(traces[0])-") && parent.hasSuffix("-01"), "\(parent)")
        }
        let bodies = origin.requests(for: "v1/traces").flatMap(\.body)
        #expect(!String(decoding: bodies, as: UTF8.self).contains("kiosk-7-serial-A1B2"))
        await origin.shutdown()
    }

    /// The forms step in its parts: the forms' downloads, and their decoding and patching (the
    /// pack's frames as they arrive, the other forms after), each with what it gave.
    @Test func aReleaseWithPatchesShowsItsDecodingAndPatching() async throws {
        let origin = try await TestOrigin()
        origin.acceptPosts(on: "v1/traces")
        let dir = try Scratch()
        defer { dir.remove() }
        let main = ReleaseBytesEndToEndTests.bundle(1, 200_000)
        try dir.write("v1/index.html", "<script src=main.js></script>")
        try dir.write("v1/main.js", main)
        try dir.write("v1/style.css", ReleaseBytesEndToEndTests.bundle(2, 50_000))
        #expect(try Binary.run(["routes", dir.path("v1"), "--compress"]).status == 0)
        try dir.write("v2/index.html", "<script src=main.js></script>")
        try dir.write("v2/main.js", main.replacingOccurrences(of: "render", with: "paint", options: [], range: main.range(of: "render")))
        try dir.write("v2/style.css", ReleaseBytesEndToEndTests.bundle(3, 50_000))
        #expect(try Binary.run(["routes", dir.path("v2"), "--delta-from", dir.path("v1")]).status == 0)
        try ReleaseBytesEndToEndTests.upload(dir.path("v1"), to: origin)
        #expect(try Self.sync(origin, dir, ["--otlp-endpoint", origin.url + "/v1/traces"]).status == 0)
        try ReleaseBytesEndToEndTests.upload(dir.path("v2"), to: origin)
        let second = try Self.sync(origin, dir, ["--otlp-endpoint", origin.url + "/v1/traces"])
        let patched = try second.json()["patchedFiles"] as? Int ?? 0
        #expect(second.status == 0 && patched >= 1, "\(second.stdout) \(second.stderr)")

        let spans = Self.spans(try Self.exports(origin))
        let roots = spans.filter { $0.span["name"] as? String == "cenarius.sync" }
        try #require(roots.count == 2)
        for (index, root) in roots.enumerated() {
            let trace = spans.filter { $0.span["traceId"] as? String == root.span["traceId"] as? String }
            let forms = try #require(trace.first { $0.span["name"] as? String == "cenarius.download.forms" })
            let parts = trace.filter { $0.span["parentSpanId"] as? String == forms.span["spanId"] as? String }
            let names = Set(parts.compactMap { $0.span["name"] as? String })
            #expect(names.contains("cenarius.forms.download") && !names.isDisjoint(with: ["cenarius.forms.unpack", "cenarius.forms.decode"]), "\(names)")
            let decoding = parts.filter { ["cenarius.forms.unpack", "cenarius.forms.decode"].contains($0.span["name"] as? String ?? "") }
            func total(_ key: String) -> Int { decoding.map { Int(Self.attributes($0.span["attributes"])[key] ?? "") ?? 0 }.reduce(0, +) }
            // The first install decodes compressed files; the second patches what changed.
            if index == 0 { #expect(total("cenarius.files") + total("cenarius.files.compressed") >= 3, "\(decoding)") }
            else { #expect(total("cenarius.files.patched") >= 1, "\(decoding)") }
        }
        await origin.shutdown()
    }

    @Test func noSecretIsExportedAndAFailedSyncSaysItsClass() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        origin.inject(.status(500), on: "Routes.json")
        let remote = origin.url.replacingOccurrences(of: "http://", with: "http://deploy:pa55-s3cret@")
        let run = try Device(in: dir).run(["sync", "--remote", remote, "--header", "X-Api-Key: hunter2-key", "--otlp-endpoint", origin.url + "/v1/traces",
                                  "--otlp-header", "Authorization: Bearer collector-token"])
        #expect(run.status == 3, "\(run.stderr)")
        let spans = Self.spans(try Self.exports(origin))
        let root = try #require(spans.first { $0.span["name"] as? String == "cenarius.sync" })
        #expect((root.span["status"] as? [String: Any])?["code"] as? String == "STATUS_CODE_ERROR")
        #expect(Self.attributes(root.span["attributes"])["cenarius.error.exit_code"] == "3")
        #expect(Self.attributes(root.span["attributes"])["cenarius.error.code"] == "REMOTE")
        let exports = origin.requests(for: "v1/traces")
        let text = String(decoding: exports.flatMap(\.body), as: UTF8.self)
        #expect(!text.contains("pa55-s3cret") && !text.contains("hunter2") && !text.contains("collector-token"))
        // The collector's header goes to the collector alone; the remote's to the remote alone.
        #expect(exports.allSatisfy { $0.headers["authorization"] == "Bearer collector-token" && $0.headers["x-api-key"] == nil })
        #expect(origin.requests(for: "Routes.json").allSatisfy { $0.headers["authorization"]?.hasPrefix("Basic ") == true })
        await origin.shutdown()
    }

    @Test(arguments: ["down", "failing", "hanging", "endless"])
    func aCollectorThatIsDownFailsOrHangsChangesNothing(_ collector: String) async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        var endpoint = origin.url + "/v1/traces"
        switch collector {
        case "down": endpoint = Binary.downRemote + "/v1/traces"
        case "failing": origin.inject(.status(503), on: "v1/traces")
        // A hostile collector: 200 and a body that never ends.
        case "endless": origin.inject(.endless, on: "v1/traces")
        default: origin.inject(.stall, on: "v1/traces")
        }
        let started = Date()
        let run = try Self.sync(origin, dir, ["--otlp-endpoint", endpoint])
        let seconds = Date().timeIntervalSince(started)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.syncOutcome(run) == "committed")
        // The trace is given up on at exit after 2 s at most.
        #expect(seconds < 4.5, "\(collector): \(seconds) s")
        #expect(FileManager.default.fileExists(atPath: dir.path("cache/current")) || !run.stdout.isEmpty)
        await origin.shutdown()
    }

    static func syncOutcome(_ run: Binary.Run) throws -> String? {
        try run.json()["outcome"] as? String
    }

    @Test func theStandardVariablesConfigureItAndTheSamplerCanTurnItOff() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        let environment = ["OTEL_EXPORTER_OTLP_ENDPOINT": origin.url + "/", "OTEL_SERVICE_NAME": "lobby-kiosk",
                           "OTEL_RESOURCE_ATTRIBUTES": "site=berl%69n,service.name=ignored", "OTEL_EXPORTER_OTLP_HEADERS": "x-collector-key=abc%20def"]
        let run = try Self.sync(origin, dir, environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let exports = origin.requests(for: "v1/traces")
        #expect(!exports.isEmpty && exports.allSatisfy { $0.headers["x-collector-key"] == "abc def" })
        let root = try #require(Self.spans(try Self.exports(origin)).first { $0.span["name"] as? String == "cenarius.sync" })
        #expect(root.resource["service.name"] == "lobby-kiosk" && root.resource["site"] == "berlin")

        // Off: nothing exported, and the origin still sees the trace, not sampled.
        origin.resetRequests()
        origin.publish(["index.html": "<h1>v2</h1>"])
        let off = try Self.sync(origin, dir, ["--trace-sampler", "always_off"], environment: environment)
        #expect(off.status == 0, "\(off.stderr)")
        #expect(origin.requests(for: "v1/traces").isEmpty)
        let parents = origin.requests.compactMap { $0.headers["traceparent"] }
        #expect(!parents.isEmpty && parents.allSatisfy { $0.hasSuffix("-00") }, "\(parents)")

        let bad = try Self.sync(origin, dir, ["--trace-sampler", "sometimes"], environment: environment)
        #expect(bad.status == 64 && bad.stderr.contains("trace-sampler"), "\(bad.stderr)")
        // A header that would split the export request is refused as --header's is, its value unshown.
        let split = try Self.sync(origin, dir, ["--otlp-endpoint", origin.url + "/v1/traces", "--otlp-header", "X-Key: s3cret\r\nInjected: 1"])
        #expect(split.status == 64 && split.stderr.contains("--otlp-header") && !split.stderr.contains("s3cret"), "\(split.stderr)")
        await origin.shutdown()
    }

    @Test func theDaemonTracesEachSyncAndCountsTheSpansItCouldNotSend() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        let arguments = ["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600", "--otlp-endpoint", origin.url + "/v1/traces"]
        // Every 50 ms, so that the test sees the export without waiting the default 5 s.
        let daemon = try DaemonProcess(arguments, cache: dir.path("cache"), environment: ["OTEL_BSP_SCHEDULE_DELAY": "50"])
        _ = try daemon.waitUntilServing()
        try waitUntil(timeout: 20) { ((try? Self.spans(Self.exports(origin))) ?? []).contains { $0.span["name"] as? String == "cenarius.sync" } }
        #expect(daemon.terminate().status == 0)

        // A collector that is down: 4 spans held at most, the rest counted as dropped.
        let down = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600",
                                      "--otlp-endpoint", Binary.downRemote + "/v1/traces"],
                                     cache: dir.path("cache"), environment: ["OTEL_BSP_MAX_QUEUE_SIZE": "4"])
        let control = try down.waitUntilServing()
        for _ in 0..<2 {
            origin.publish(["index.html": "<h1>\(UUID().uuidString)</h1>"])
            _ = try waitForReceipt(control, try #require(try control.request("POST", "/_cenarius/sync").json()["id"] as? String))
        }
        let metrics = String(decoding: try control.request("GET", "/metrics").body, as: UTF8.self)
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("cenarius_trace_spans_dropped_total ") })
        #expect((Int(line.split(separator: " ").last ?? "") ?? 0) > 0, "\(line)")
        #expect(down.terminate().status == 0)
        await origin.shutdown()
    }

    @Test func aTrialThatTimesOutIsASpanThatEndsInItsRollbackAndTheControlAPIJoinsTheCallersTrace() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        // A preset with a table: what the unconfirmed first release is rolled back to.
        try dir.write("preset/index.html", "<h1>shipped</h1>")
        #expect(try Binary.run(["routes", dir.path("preset")]).status == 0)
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600",
                                        "--confirm-timeout", "1", "--otlp-endpoint", origin.url + "/v1/traces"],
                                       cache: dir.path("cache"), environment: ["OTEL_BSP_SCHEDULE_DELAY": "50"])
        let http = try daemon.waitUntilServing()
        let caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        let asked = try http.request("POST", "/_cenarius/sync", headers: ["traceparent": caller])
        _ = try waitForReceipt(http, try #require(try asked.json()["id"] as? String))
        func named(_ name: String) -> [(span: [String: Any], resource: [String: String])] {
            ((try? Self.spans(Self.exports(origin))) ?? []).filter { $0.span["name"] as? String == name }
        }
        // Nobody confirms the first release: its trial ends in a rollback to the preset at the deadline.
        try waitUntil(timeout: 30) { !named("cenarius.trial").isEmpty && !named("POST /_cenarius/sync").isEmpty }
        let trial = try #require(named("cenarius.trial").first)
        let attributes = Self.attributes(trial.span["attributes"])
        #expect(attributes["cenarius.trial.end"] == "rolled-back: timeout", "\(attributes)")
        #expect(attributes["cenarius.rollback.to"] == "preset")
        #expect((trial.span["status"] as? [String: Any])?["code"] as? String == "STATUS_CODE_ERROR")
        let server = try #require(named("POST /_cenarius/sync").first)
        #expect(server.span["traceId"] as? String == "0af7651916cd43dd8448eb211c80319c")
        #expect(server.span["parentSpanId"] as? String == "b7ad6b7169203331")
        #expect(server.span["kind"] as? String == "SPAN_KIND_SERVER")
        #expect(Self.attributes(server.span["attributes"])["http.response.status_code"] == "202")
        #expect(daemon.terminate().status == 0)
        await origin.shutdown()
    }

    /// SIGHUP turns traces on for a daemon started without them, and off again: each reload's
    /// sync is traced or not as the configuration then says.
    @Test func aReloadTurnsTracesOnAndOff() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        let reloaded = try ReloadedDaemon(origin: origin, dir: dir, environment: ["OTEL_BSP_SCHEDULE_DELAY": "50"])
        let (daemon, reload) = (reloaded.daemon, reloaded.reload)
        let http = try daemon.waitUntilServing()
        #expect(origin.requests(for: "v1/traces").isEmpty && origin.requests.allSatisfy { $0.headers["traceparent"] == nil })

        try reload(#"{"remote": "\#(origin.url)", "otlp-endpoint": "\#(origin.url)/v1/traces"}"#)
        try waitUntil(timeout: 20) { ((try? Self.spans(Self.exports(origin))) ?? []).contains { $0.span["name"] as? String == "cenarius.sync" } }
        #expect(origin.requests(for: "Routes.json").last?.headers["traceparent"] != nil)

        try reload(#"{"remote": "\#(origin.url)"}"#)
        usleep(300_000)
        let exported = origin.requests(for: "v1/traces").count
        origin.publish(["index.html": "<h1>v2</h1>"])
        _ = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        usleep(300_000)
        #expect(origin.requests(for: "v1/traces").count == exported, "traces went on after the reload took the collector away")
        #expect(origin.requests(for: "Routes.json").last?.headers["traceparent"] == nil)
        #expect(daemon.terminate().status == 0)
        await origin.shutdown()
    }
}
