import NIOCore
import NIOHTTP1
import Tracing

extension DaemonRouter {
    /// A server span for a request to the control API (docs/telemetry.md), in the caller's trace
    /// when it sends `traceparent`; with no collector configured, the tracing API's no-op.
    func traced(_ head: HTTPRequestHead, path: String, _ answer: () async -> PreparedReply) async -> PreparedReply {
        var context = InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(head.headers, into: &context, using: HeadersExtractor())
        let span = startSpan("\(head.method.rawValue) \(path)", context: context, ofKind: .server)
        defer { span.end() }
        let reply = await InstrumentationContext.withValue(span.context) { await answer() }
        span.updateAttributes { attributes in
            attributes["http.request.method"] = head.method.rawValue
            attributes["url.path"] = path
            if let status = reply.head.statusCode { attributes["http.response.status_code"] = status }
        }
        if let status = reply.head.statusCode, status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        return reply
    }
}

private struct HeadersExtractor: Extractor {
    func extract(key: String, from carrier: HTTPHeaders) -> String? { carrier.first(name: key) }
}

extension EncodedHead {
    /// The status code the head starts with (`HTTP/1.1 200 …`).
    var statusCode: Int? {
        guard let digits = bytes.getBytes(at: bytes.readerIndex + 9, length: 3),
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}
