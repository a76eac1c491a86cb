import RouteSync
import Tracing

/// An `ExportMetricsServiceRequest` in OTLP/JSON, written by hand as the traces' is
/// (`OTLPJSON`): counters as cumulative monotonic sums, gauges as gauges, histograms as explicit
/// bucket histograms, each under the name `GET /metrics` gives it, labels as attributes.
enum OTLPMetricsJSON {
    /// AggregationTemporality's CUMULATIVE: every figure counts from `start`, the daemon's start.
    private static let cumulative = 2

    static func request(_ families: [MetricFamily], resource: [(key: String, value: SpanAttribute)], scopeVersion: String,
                        start: UInt64, now: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512 + families.count * 200)
        out += #"{"resourceMetrics":[{"resource":{"attributes":"#.utf8
        OTLPJSON.attributes(resource, &out)
        out += #"},"scopeMetrics":[{"scope":{"name":"cenariusd","version":"#.utf8
        JSONText.appendString(scopeVersion, to: &out)
        out += #"},"metrics":["#.utf8
        for (index, family) in families.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"name":"#.utf8
            JSONText.appendString(family.name, to: &out)
            switch family.kind {
            case .counter: out += #","sum":{"aggregationTemporality":\#(cumulative),"isMonotonic":true,"dataPoints":["#.utf8
            case .gauge: out += #","gauge":{"dataPoints":["#.utf8
            case .histogram: out += #","histogram":{"aggregationTemporality":\#(cumulative),"dataPoints":["#.utf8
            }
            for (index, point) in family.points.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                self.point(point, family.kind, start: start, now: now, &out)
            }
            out += "]}}".utf8
        }
        out += "]}]}]}".utf8
        return out
    }

    private static func point(_ point: MetricFamily.Point, _ kind: MetricFamily.Kind, start: UInt64, now: UInt64, _ out: inout [UInt8]) {
        out += #"{"attributes":"#.utf8
        OTLPJSON.attributes(point.labels.map { (key: $0.key, value: SpanAttribute.string($0.value)) }, &out)
        // A gauge is a value at a moment: no start (the specification leaves it unset).
        if kind != .gauge { out += #","startTimeUnixNano":"\#(start)""#.utf8 }
        out += #","timeUnixNano":"\#(now)""#.utf8
        switch kind {
        case .counter, .gauge:
            // 64-bit integers are strings in OTLP/JSON; a double is a JSON number, finite.
            if kind == .counter, let number = Int64(point.value) {
                out += #","asInt":"\#(number)""#.utf8
            } else {
                let number = Double(point.value) ?? 0
                out += #","asDouble":\#(number.isFinite ? number : 0)"#.utf8
            }
        case .histogram:
            out += #","count":"\#(point.count)","sum":\#(point.sum.isFinite ? point.sum : 0),"bucketCounts":["#.utf8
            // OTLP's counts are per bucket, Prometheus's cumulative; the last bucket is above every bound.
            var below: UInt64 = 0
            for (index, total) in (point.cumulative + [point.count]).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out += #""\#(total >= below ? total - below : 0)""#.utf8
                below = max(below, total)
            }
            out += #"],"explicitBounds":["#.utf8
            for (index, bound) in point.bounds.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out += "\(bound)".utf8
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
    }
}
