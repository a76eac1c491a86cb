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
    private let background: Bool

    private init(settings: TraceSettings, background: Bool) {
        queue = SpanQueue(capacity: settings.queueSize)
        self.background = background
        let resource = settings.resource.map { (key: $0.key, value: SpanAttribute.string($0.value)) }
        // The daemon's exports run on their own thread: a hanging collector holds it 5 s, then the
        // next try. A command's one export is at its exit: 1 s to connect, 2 s in all.
        exporter = SpanExporter(settings: settings, queue: queue, timeout: background ? 5 : 1) { spans in
            OTLPJSON.request(spans, resource: resource, scopeVersion: CenariusVersion.string)
        }
    }

    /// The process's telemetry; nil when `settings` is (no endpoint configured). `background`:
    /// exports every few seconds from a thread of their own (the daemon); else once, at `shutdown`.
    package static func start(_ settings: TraceSettings?, background: Bool = true) -> Telemetry? {
        guard let settings else { return nil }
        let telemetry = Telemetry(settings: settings, background: background)
        InstrumentationSystem.bootstrap(SpanTracer(sampler: settings.sampler, queue: telemetry.queue, exporter: telemetry.exporter))
        if background { telemetry.exporter.start() }
        return telemetry
    }

    /// Spans lost to a full queue or refused by the collector (the metrics' `cenarius_trace_spans_dropped_total`).
    package var droppedSpans: Int { queue.dropped }
    package var exportedSpans: Int { exporter.exported }

    package func shutdown(timeout: Double = 3) {
        if background { exporter.shutdown(timeout: timeout) } else { exporter.exportNow() }
    }
}
