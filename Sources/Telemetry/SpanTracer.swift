package import Tracing

/// cenariusd's tracer for swift-distributed-tracing: W3C ids, the sampler, spans recorded in
/// memory and handed to the exporter's queue as they end. Unsampled spans still carry their
/// context, so requests made inside them say `traceparent` with the sampled flag off.
package struct SpanTracer: Tracer {
    /// The sampler in force; nil: traces are off (a reload took the collector away), and spans
    /// carry no context, so requests carry no `traceparent`.
    let sampler: SamplerSwitch
    let queue: SpanQueue
    let exporter: SpanExporter

    package func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> RecordingSpan {
        var context = context()
        guard let sampler = sampler.current else {
            return RecordingSpan(name: operationName, context: context, parentSpanID: nil, kind: kind, start: 0) { _ in }
        }
        let parent = context.spanContext
        let remote = context.remoteParent
        let spanContext = SpanContext.child(of: parent, local: remote == nil) { traceID in sampler.sampled(traceID: traceID, remoteParent: remote) }
        context.spanContext = spanContext
        context.remoteParent = nil
        let queue = queue, exporter = exporter
        return RecordingSpan(name: operationName, context: context, parentSpanID: parent?.spanID, kind: kind,
                             start: instant().nanosecondsSinceEpoch) { finished in
            guard finished.context.sampled else { return }
            queue.append(finished)
            exporter.spanEnded()
        }
    }

    /// The spans ended so far go to the collector now (the exporter's thread wakes).
    package func forceFlush() {
        exporter.flush()
    }

    /// `traceparent` for the span the context is in.
    package func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let spanContext = context.spanContext else { return }
        injector.inject(spanContext.traceparent, forKey: "traceparent", into: &carrier)
    }

    /// A caller's `traceparent`: spans started in this context join its trace.
    package func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        guard let text = extractor.extract(key: "traceparent", from: carrier), let parent = SpanContext(traceparent: text) else { return }
        context.spanContext = parent
        context.remoteParent = parent.sampled
    }
}

/// Set on a context whose span context came from a caller's `traceparent`, for the parent-based
/// samplers: the first span started in it follows the caller's decision.
enum RemoteParentKey: InstrumentationContextKey {
    typealias Value = Bool
}

extension InstrumentationContext {
    var remoteParent: Bool? {
        get { self[RemoteParentKey.self] }
        set { self[RemoteParentKey.self] = newValue }
    }
}
