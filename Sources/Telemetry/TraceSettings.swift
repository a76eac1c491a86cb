import RouteSync

/// Where traces go and what they say about the device: from cenariusd's settings, else from
/// OpenTelemetry's standard variables (docs/telemetry.md). No endpoint: no tracer at all.
package struct TraceSettings: Sendable, Equatable {
    /// The collector's traces URL (`…/v1/traces`).
    package var endpoint: String
    /// "Name: value", sent with each export (an API key; never put in a span).
    package var headers: [String] = []
    package var sampler = Sampler.default
    /// Resource attributes (`service.name`, `service.version`, the device's hash, the channel, and
    /// `OTEL_RESOURCE_ATTRIBUTES`'), in the order given.
    package var resource: [(key: String, value: String)] = []
    /// A PEM bundle of CAs for an https collector (`OTEL_EXPORTER_OTLP_CERTIFICATE`).
    package var caFile: String?
    /// Seconds between exports (`OTEL_BSP_SCHEDULE_DELAY` is in milliseconds).
    package var delay = 5.0
    /// Spans held for the collector at most (`OTEL_BSP_MAX_QUEUE_SIZE`).
    package var queueSize = 2048

    package init(endpoint: String) {
        self.endpoint = endpoint
    }

    package static func == (lhs: TraceSettings, rhs: TraceSettings) -> Bool {
        lhs.endpoint == rhs.endpoint && lhs.headers == rhs.headers && lhs.sampler == rhs.sampler && lhs.caFile == rhs.caFile
            && lhs.delay == rhs.delay && lhs.queueSize == rhs.queueSize
            && lhs.resource.map(\.key) == rhs.resource.map(\.key) && lhs.resource.map(\.value) == rhs.resource.map(\.value)
    }

    /// The signal's URL from the standard variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it
    /// is, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` after it.
    package static func endpoint(traces: String?, base: String?) -> String? {
        endpoint(traces, base: base, path: "v1/traces")
    }

    /// A signal's URL: its own variable's as it is, else the base's with the signal's path after it.
    package static func endpoint(_ given: String?, base: String?, path: String) -> String? {
        if let given, !given.isEmpty { return given }
        guard let base, !base.isEmpty else { return nil }
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/" + path
    }

    /// `key=value,key=value` with values percent-encoded (W3C Baggage's form, which both
    /// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES` use); malformed members are skipped.
    package static func pairs(_ text: String) -> [(key: String, value: String)] {
        text.split(separator: ",").compactMap { member in
            guard let equals = member.firstIndex(of: "=") else { return nil }
            let key = member[..<equals].trimmingSpaces
            guard !key.isEmpty else { return nil }
            return (String(key), percentDecoded(member[member.index(after: equals)...].trimmingSpaces))
        }
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2, let value = Hex.bytes(Array(bytes.prefix(2)).map(lowercased)) {
                out += value
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
