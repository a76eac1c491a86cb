import Tracing

/// A span once it ended: what the exporter encodes. A value, so the queue holds no locks.
struct FinishedSpan: Sendable {
    var name: String
    var context: SpanContext
    var parentSpanID: [UInt8]?
    var kind: SpanKind
    var start: UInt64
    var end: UInt64
    var attributes: [(key: String, value: SpanAttribute)]
    var events: [(name: String, time: UInt64, attributes: [(key: String, value: SpanAttribute)])]
    /// OTLP's status: 0 unset, 1 ok, 2 error.
    var statusCode: Int
    var statusMessage: String?
}

extension SpanAttributes {
    /// In key order, so the same span encodes to the same bytes.
    var sortedPairs: [(key: String, value: SpanAttribute)] {
        var pairs: [(key: String, value: SpanAttribute)] = []
        forEach { key, value in pairs.append((key, value)) }
        return pairs.sorted { $0.key < $1.key }
    }
}
