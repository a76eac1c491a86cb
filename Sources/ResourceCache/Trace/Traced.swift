import RouteSync
import Tracing

/// A sync's spans through the tracing API (swift-distributed-tracing): with no tracer
/// bootstrapped (no collector configured) each is the API's no-op, a few hundred nanoseconds.
/// The sync is synchronous and throws typed errors, which the API's `withSpan` does not keep.
enum Traced {
    static func span<T, E: Error>(_ name: String, _ body: (any Span) throws(E) -> T) throws(E) -> T {
        let span = startSpan(name)
        defer { span.end() }
        let result = InstrumentationContext.withValue(span.context) { Result { () throws(E) -> T in try body(span) } }
        if case .failure(let error) = result {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        }
        return try result.get()
    }

    /// The `traceparent` of the span this runs in, for the requests made in it.
    static var traceparent: String? {
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(InstrumentationContext.current ?? .topLevel, into: &carrier, using: HeaderInjector())
        return carrier["traceparent"]
    }

    private struct HeaderInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
    }
}

extension SyncReport {
    /// What the forms gave so far: files decoded, bytes on the wire, fallbacks.
    func traceBytes(_ span: any Span, files: Int) {
        span.updateAttributes { attributes in
            attributes["cenarius.files"] = SpanAttribute.int64(Int64(files))
            attributes["cenarius.bytes.fetched"] = SpanAttribute.int64(bytesFetched)
            attributes["cenarius.files.patched"] = SpanAttribute.int64(Int64(patchedFiles))
            attributes["cenarius.files.compressed"] = SpanAttribute.int64(Int64(compressedFiles))
            attributes["cenarius.forms.fallbacks"] = SpanAttribute.int64(Int64(formFallbacks))
        }
    }

    /// What an operator filters a sync's trace on (docs/telemetry.md).
    func traceAttributes(_ span: any Span, channel: String) {
        span.updateAttributes { attributes in
            attributes["cenarius.channel"] = SpanAttribute.string(channel)
            attributes["cenarius.outcome"] = SpanAttribute.string(outcome.rawValue)
            if let generation { attributes["cenarius.generation"] = SpanAttribute.int64(Int64(generation)) }
            attributes["cenarius.files.downloaded"] = SpanAttribute.int64(Int64(downloadedFiles))
            attributes["cenarius.bytes.fetched"] = SpanAttribute.int64(bytesFetched)
            attributes["cenarius.bytes.held"] = SpanAttribute.int64(bytesHeld)
            attributes["cenarius.files.patched"] = SpanAttribute.int64(Int64(patchedFiles))
            attributes["cenarius.files.compressed"] = SpanAttribute.int64(Int64(compressedFiles))
            attributes["cenarius.forms.fallbacks"] = SpanAttribute.int64(Int64(formFallbacks))
            if let deferred {
                attributes["cenarius.deferred.reason"] = SpanAttribute.string(deferred.reason)
                attributes["cenarius.deferred.release"] = SpanAttribute.string(deferred.release)
            }
        }
    }
}
