import Foundation
@testable import Telemetry
import Testing
import TestOrigin
import Tracing

/// The tracer's parts alone: the samplers by their standard names, `traceparent` both ways, the
/// standard variables' `k=v` lists, the queue's bound, and the OTLP/JSON it writes.
@Suite struct TracerPartsTests {
    @Test func samplersByTheirStandardNames() throws {
        #expect(Sampler("always_on") == Sampler(root: .always, parentBased: false))
        #expect(Sampler("parentbased_always_off") == Sampler(root: .never, parentBased: true))
        #expect(Sampler("traceidratio", argument: "0.25") == Sampler(root: .ratio(0.25), parentBased: false))
        #expect(Sampler("parentbased_traceidratio:0.5") == Sampler(root: .ratio(0.5), parentBased: true))
        for bad in ["sometimes", "traceidratio:2", "traceidratio:-1", "traceidratio:x", "parentbased_", ""] {
            #expect(Sampler(bad) == nil, "\(bad)")
        }
        let id = [UInt8](repeating: 0xAB, count: 16)
        #expect(Sampler("traceidratio:0")!.sampled(traceID: id, remoteParent: nil) == false)
        #expect(Sampler("traceidratio:1")!.sampled(traceID: id, remoteParent: nil) == true)
        // A caller's decision holds for the parent-based samplers only.
        #expect(Sampler("parentbased_always_on")!.sampled(traceID: id, remoteParent: false) == false)
        #expect(Sampler("always_on")!.sampled(traceID: id, remoteParent: false) == true)
        // About the ratio asked for, over many random ids.
        let sampler = try #require(Sampler("traceidratio:0.3"))
        let kept = (0..<4000).filter { _ in sampler.sampled(traceID: (0..<16).map { _ in UInt8.random(in: 0...255) }, remoteParent: nil) }.count
        #expect((1000...1400).contains(kept), "\(kept) of 4000")
    }

    @Test func traceparentBothWays() throws {
        let context = try #require(SpanContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        #expect(context.sampled && context.traceID.count == 16 && context.spanID.count == 8)
        #expect(context.traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        for bad in ["01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  // a version not known
                    "00-00000000000000000000000000000000-b7ad6b7169203331-01",  // all-zero ids are invalid
                    "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
                    "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",  // upper case is not hex here
                    "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
                    "", "garbage"] {
            #expect(SpanContext(traceparent: bad) == nil, "\(bad)")
        }
        let root = SpanContext.child(of: nil, local: true) { _ in false }
        #expect(!root.sampled && root.traceparent.hasSuffix("-00") && root.traceparent.count == 55)
        let child = SpanContext.child(of: context, local: true) { _ in false }
        #expect(child.traceID == context.traceID && child.spanID != context.spanID && child.sampled)
    }

    @Test func theStandardVariablesLists() {
        let pairs = TraceSettings.pairs("api-key=abc%20def, site = berlin,broken,=x,empty=")
        #expect(pairs.map(\.key) == ["api-key", "site", "empty"])
        #expect(pairs.map(\.value) == ["abc def", "berlin", ""])
        #expect(TraceSettings.endpoint(traces: nil, base: "http://c:4318/") == "http://c:4318/v1/traces")
        #expect(TraceSettings.endpoint(traces: "http://c:4318/custom", base: "http://other") == "http://c:4318/custom")
        #expect(TraceSettings.endpoint(traces: "", base: nil) == nil)
    }

    static func span(_ name: String) -> FinishedSpan {
        FinishedSpan(name: name, context: SpanContext.child(of: nil, local: true) { _ in true }, parentSpanID: nil, kind: .internal,
                     start: 1, end: 2, attributes: [], events: [], statusCode: 0, statusMessage: nil)
    }

    @Test func theQueueHoldsItsCapacityAndCountsWhatItDrops() {
        let queue = SpanQueue(capacity: 3)
        for index in 0..<5 { queue.append(Self.span("s\(index)")) }
        #expect(queue.count == 3 && queue.dropped == 2)
        let batch = queue.take(2)
        #expect(batch.map(\.name) == ["s2", "s3"] && queue.count == 1)
        queue.append(Self.span("s5"))
        // The batch comes back in front of what ended meanwhile; its older span no longer fits.
        queue.putBack(batch)
        #expect(queue.take(10).map(\.name) == ["s3", "s4", "s5"] && queue.dropped == 3)
        queue.drop(4)
        #expect(queue.dropped == 7 && queue.count == 0)
    }

    @Test func theExportIsJSONWithTheProtocolsShapes() throws {
        var span = Self.span("cenarius.sync \"quoted\"")
        span.parentSpanID = [1, 2, 3, 4, 5, 6, 7, 8]
        span.attributes = [("bytes", .int64(5792)), ("ok", .bool(true)), ("name", .string("a\nb")), ("list", .stringArray(["x", "y"]))]
        span.events = [("exception", 3, [("exception.message", .string("it broke"))])]
        span.statusCode = 2
        span.statusMessage = "failed"
        let bytes = OTLPJSON.request([span], resource: [("service.name", .string("cenariusd"))], scopeVersion: "0.1.0")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let resourceSpans = try #require((object["resourceSpans"] as? [[String: Any]])?.first)
        let spans = try #require(((resourceSpans["scopeSpans"] as? [[String: Any]])?.first?["spans"]) as? [[String: Any]])
        let encoded = try #require(spans.first)
        #expect(encoded["name"] as? String == "cenarius.sync \"quoted\"")
        #expect(encoded["parentSpanId"] as? String == "0102030405060708")
        #expect((encoded["traceId"] as? String)?.count == 32)
        #expect(encoded["startTimeUnixNano"] as? String == "1" && encoded["kind"] as? Int == 1)
        let attributes = try #require(encoded["attributes"] as? [[String: Any]])
        #expect((attributes.first { $0["key"] as? String == "bytes" }?["value"] as? [String: Any])?["intValue"] as? String == "5792")
        #expect((encoded["status"] as? [String: Any])?["code"] as? Int == 2)
    }

    /// What swift-prometheus writes, read back for OTLP: labels with escapes, integer counters
    /// kept exact, a histogram's cumulative buckets turned into OTLP's per-bucket counts.
    @Test func thePrometheusTextIsReadBackIntoTheSameFigures() throws {
        let text = """
            # TYPE cenarius_syncs_total counter
            cenarius_syncs_total{outcome="committed"} 3
            cenarius_syncs_total{outcome="odd \\"q\\" \\\\ x"} 9007199254740993
            # TYPE cenarius_generation gauge
            cenarius_generation 4.0
            # TYPE cenarius_http_request_duration_seconds histogram
            cenarius_http_request_duration_seconds_bucket{le="5e-05"} 1
            cenarius_http_request_duration_seconds_bucket{le="0.001"} 3
            cenarius_http_request_duration_seconds_bucket{le="+Inf"} 4
            cenarius_http_request_duration_seconds_sum 2.5
            cenarius_http_request_duration_seconds_count 4
            # TYPE cenarius_unused counter

            """
        let families = MetricFamily.parse(Array(text.utf8))
        #expect(families.map(\.name) == ["cenarius_syncs_total", "cenarius_generation", "cenarius_http_request_duration_seconds"])
        #expect(families[0].points.map(\.labels.first?.value) == ["committed", #"odd "q" \ x"#])
        #expect(families[0].points.map(\.value) == ["3", "9007199254740993"])
        let histogram = try #require(families[2].points.first)
        #expect(histogram.bounds == [0.00005, 0.001] && histogram.cumulative == [1, 3] && histogram.count == 4 && histogram.sum == 2.5)

        let bytes = OTLPMetricsJSON.request(families, resource: [("service.name", .string("cenariusd"))], scopeVersion: "0.1.0", start: 1, now: 2)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let metrics = try #require(((object["resourceMetrics"] as? [[String: Any]])?.first?["scopeMetrics"] as? [[String: Any]])?.first?["metrics"] as? [[String: Any]])
        let sum = try #require(metrics[0]["sum"] as? [String: Any])
        #expect(sum["isMonotonic"] as? Bool == true && sum["aggregationTemporality"] as? Int == 2)
        #expect((sum["dataPoints"] as? [[String: Any]])?.last?["asInt"] as? String == "9007199254740993")
        #expect(((metrics[1]["gauge"] as? [String: Any])?["dataPoints"] as? [[String: Any]])?.first?["asDouble"] as? Double == 4)
        let point = try #require(((metrics[2]["histogram"] as? [String: Any])?["dataPoints"] as? [[String: Any]])?.first)
        #expect(point["bucketCounts"] as? [String] == ["1", "2", "1"] && point["count"] as? String == "4")
        #expect(point["explicitBounds"] as? [Double] == [0.00005, 0.001])
    }

    /// `forceFlush` sends what ended now, not after the exporter's delay (an hour here).
    @Test func forceFlushWakesTheExporter() async throws {
        let origin = try await TestOrigin()
        origin.acceptPosts(on: "v1/traces")
        var settings = TraceSettings(endpoint: origin.url + "/v1/traces")
        // An hour: under a loaded full run this test's own sleeps can last a minute and more (the
        // suite's tasks share two cores), and the delay must not run out before the flush.
        settings.delay = 3600
        let queue = SpanQueue(capacity: 16)
        let exporter = SpanExporter(SpanExporter.Target(settings, timeout: 2), queue: queue)
        exporter.start()
        let tracer = SpanTracer(sampler: SamplerSwitch(.default), queue: queue, exporter: exporter)
        // Named for this test alone: another test's exporter may still post to a port this origin was given again.
        let name = "cenarius.sync." + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let ours = { origin.requests(for: "v1/traces").filter { String(decoding: $0.body, as: UTF8.self).contains(name) } }
        tracer.startSpan(name).end()
        try await Task.sleep(for: .milliseconds(300))
        #expect(ours().isEmpty && queue.count == 1)
        tracer.forceFlush()
        let deadline = ContinuousClock.now + .seconds(60)
        while ours().isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(ours().count == 1 && queue.count == 0)
        exporter.shutdown(timeout: 1)
        await origin.shutdown()
    }
}
