import RouteSync
import Tracing
import Transport

/// Traces for the process, when a collector is configured: `start` makes the tracer the one the
/// tracing API hands every span to (once per process, as `InstrumentationSystem` allows), and
/// `shutdown` sends what is left. Without an endpoint nothing is made and every span is the
/// tracing API's no-op: no cost to a device that does not trace.
package final class Telemetry: Sendable {
    private let exporter: SpanExporter
    private let queue: SpanQueue

    private init(settings: TraceSettings) {
        queue = SpanQueue(capacity: settings.queueSize)
        let resource = settings.resource.map { (key: $0.key, value: SpanAttribute.string($0.value)) }
        exporter = SpanExporter(settings: settings, queue: queue) { spans in
            OTLPJSON.request(spans, resource: resource, scopeVersion: CenariusVersion.string)
        }
    }

    /// The process's telemetry; nil when `settings` is (no endpoint configured).
    package static func start(_ settings: TraceSettings?) -> Telemetry? {
        guard let settings else { return nil }
        let telemetry = Telemetry(settings: settings)
        InstrumentationSystem.bootstrap(SpanTracer(sampler: settings.sampler, queue: telemetry.queue, exporter: telemetry.exporter))
        telemetry.exporter.start()
        return telemetry
    }

    /// Spans lost to a full queue or refused by the collector (the metrics' `cenarius_trace_spans_dropped_total`).
    package var droppedSpans: Int { queue.dropped }
    package var exportedSpans: Int { exporter.exported }

    package func shutdown(timeout: Double = 3) {
        exporter.shutdown(timeout: timeout)
    }
}
