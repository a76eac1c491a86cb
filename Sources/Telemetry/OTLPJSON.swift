import RouteSync
import Tracing

/// An `ExportTraceServiceRequest` in OTLP/JSON (the OpenTelemetry protocol's JSON mapping of its
/// protobuf messages: ids as lowercase hex, 64-bit numbers as strings, enums as numbers), written
/// by hand: the encoding is a few fixed shapes, and swift-protobuf's generated types would add
/// their runtime to the binary (docs/decisions.md).
enum OTLPJSON {
    static func request(_ spans: [FinishedSpan], resource: [(key: String, value: SpanAttribute)], scopeVersion: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + spans.count * 400)
        out += #"{"resourceSpans":[{"resource":{"attributes":"#.utf8
        attributes(resource, &out)
        out += #"},"scopeSpans":[{"scope":{"name":"cenariusd","version":"#.utf8
        JSONText.appendString(scopeVersion, to: &out)
        out += #"},"spans":["#.utf8
        for (index, span) in spans.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            self.span(span, &out)
        }
        out += "]}]}]}".utf8
        return out
    }

    private static func span(_ span: FinishedSpan, _ out: inout [UInt8]) {
        out += #"{"traceId":""#.utf8
        out += StreamingHasher.hex(span.context.traceID).utf8
        out += #"","spanId":""#.utf8
        out += StreamingHasher.hex(span.context.spanID).utf8
        out += "\"".utf8
        if let parent = span.parentSpanID {
            out += #","parentSpanId":""#.utf8
            out += StreamingHasher.hex(parent).utf8
            out += "\"".utf8
        }
        out += #","name":"#.utf8
        JSONText.appendString(span.name, to: &out)
        out += #","kind":\#(kind(span.kind)),"startTimeUnixNano":"\#(span.start)","endTimeUnixNano":"\#(span.end)","attributes":"#.utf8
        attributes(span.attributes, &out)
        out += #","events":["#.utf8
        for (index, event) in span.events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"timeUnixNano":"\#(event.time)","name":"#.utf8
            JSONText.appendString(event.name, to: &out)
            out += #","attributes":"#.utf8
            attributes(event.attributes, &out)
            out.append(UInt8(ascii: "}"))
        }
        out += #"],"status":{"code":\#(span.statusCode)"#.utf8
        if let message = span.statusMessage {
            out += #","message":"#.utf8
            JSONText.appendString(message, to: &out)
        }
        out += "}}".utf8
    }

    /// SpanKind's numbers in OTLP: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    private static func kind(_ kind: SpanKind) -> Int {
        switch kind {
        case .internal: return 1
        case .server: return 2
        case .client: return 3
        case .producer: return 4
        case .consumer: return 5
        }
    }

    static func attributes(_ pairs: [(key: String, value: SpanAttribute)], _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        var first = true
        for (key, value) in pairs {
            guard let encoded = anyValue(value) else { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out += #"{"key":"#.utf8
            JSONText.appendString(key, to: &out)
            out += #","value":"#.utf8
            out += encoded
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// OTLP's AnyValue; nil for the kinds cenariusd never sets.
    private static func anyValue(_ value: SpanAttribute) -> [UInt8]? {
        switch value {
        case .string(let text): return tagged("stringValue", quoted: text)
        case .int64(let number): return Array(#"{"intValue":"\#(number)"}"#.utf8)
        case .int32(let number): return Array(#"{"intValue":"\#(number)"}"#.utf8)
        case .bool(let flag): return Array(#"{"boolValue":\#(flag)}"#.utf8)
        case .double(let number) where number.isFinite: return Array(#"{"doubleValue":\#(number)}"#.utf8)
        case .stringConvertible(let value): return tagged("stringValue", quoted: String(describing: value))
        case .stringArray(let texts):
            var out = Array(#"{"arrayValue":{"values":["#.utf8)
            for (index, text) in texts.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out += tagged("stringValue", quoted: text)
            }
            out += "]}}".utf8
            return out
        default: return nil
        }
    }

    private static func tagged(_ tag: String, quoted text: String) -> [UInt8] {
        var out = Array("{\"\(tag)\":".utf8)
        JSONText.appendString(text, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
