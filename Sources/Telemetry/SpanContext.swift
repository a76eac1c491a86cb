import RouteSync
package import Tracing

/// Who a span is in its trace: W3C Trace Context's ids (16 and 8 random bytes, lowercase hex on
/// the wire and in OTLP/JSON) and whether the trace is sampled. Carried in the instrumentation
/// context, so a span started inside another becomes its child and a request made inside one
/// says so in its `traceparent`.
package struct SpanContext: Sendable, Hashable {
    package var traceID: [UInt8]
    package var spanID: [UInt8]
    package var sampled: Bool

    /// A new span of the trace `parent` belongs to, or the root of a new trace. A local parent's
    /// decision holds for its children; a new trace's, or a remote parent's, is `decide`'s.
    static func child(of parent: SpanContext?, local: Bool, sampled decide: (_ traceID: [UInt8]) -> Bool) -> SpanContext {
        var generator = SystemRandomNumberGenerator()
        let spanID = randomID(8, &generator)
        let traceID = parent?.traceID ?? randomID(16, &generator)
        if let parent, local { return SpanContext(traceID: traceID, spanID: spanID, sampled: parent.sampled) }
        return SpanContext(traceID: traceID, spanID: spanID, sampled: decide(traceID))
    }

    /// Never all zero: W3C Trace Context and OTLP call such an id invalid.
    private static func randomID(_ count: Int, _ generator: inout SystemRandomNumberGenerator) -> [UInt8] {
        while true {
            let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            if bytes.contains(where: { $0 != 0 }) { return bytes }
        }
    }

    /// `00-<trace id>-<span id>-<flags>`: the `traceparent` header (W3C Trace Context, level 1).
    package var traceparent: String {
        "00-\(StreamingHasher.hex(traceID))-\(StreamingHasher.hex(spanID))-\(sampled ? "01" : "00")"
    }

    /// A `traceparent` from a caller (the control API's): nil unless it is version 00 with ids that
    /// are hex of the right length and not all zero, as the recommendation asks of a receiver.
    package init?(traceparent: String) {
        let parts = traceparent.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].elementsEqual("00".utf8), parts[3].count == 2,
              let trace = Hex.bytes(parts[1]), trace.count == 16, trace.contains(where: { $0 != 0 }),
              let span = Hex.bytes(parts[2]), span.count == 8, span.contains(where: { $0 != 0 }),
              let flags = Hex.bytes(parts[3]) else { return nil }
        self.init(traceID: trace, spanID: span, sampled: flags[0] & 1 == 1)
    }

    package init(traceID: [UInt8], spanID: [UInt8], sampled: Bool) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
    }
}

enum SpanContextKey: InstrumentationContextKey {
    typealias Value = SpanContext
    static var nameOverride: String? { "cenarius-span-context" }
}

extension InstrumentationContext {
    package var spanContext: SpanContext? {
        get { self[SpanContextKey.self] }
        set { self[SpanContextKey.self] = newValue }
    }
}

/// Lowercase hex read back (`StreamingHasher.hex` writes it): W3C Trace Context allows no upper case.
enum Hex {
    static func bytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        var high: UInt8?
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high { out.append(first << 4 | value); high = nil } else { high = value }
        }
        return out
    }
}
