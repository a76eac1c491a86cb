/// Where the daemon's metrics go over OTLP, when a collector is named for them
/// (docs/telemetry.md); no endpoint: no exporter at all.
package struct MetricSettings: Sendable, Equatable {
    /// The collector's metrics URL (`…/v1/metrics`).
    package var endpoint: String
    /// "Name: value", sent with each export (the same as the traces').
    package var headers: [String] = []
    /// The traces' resource attributes: the same device, channel and version.
    package var resource: [(key: String, value: String)] = []
    package var caFile: String?
    /// Seconds between exports (`OTEL_METRIC_EXPORT_INTERVAL` is in milliseconds; 60 s by default).
    package var interval = 60.0

    package init(endpoint: String) {
        self.endpoint = endpoint
    }

    package static func == (lhs: MetricSettings, rhs: MetricSettings) -> Bool {
        lhs.endpoint == rhs.endpoint && lhs.headers == rhs.headers && lhs.caFile == rhs.caFile && lhs.interval == rhs.interval
            && lhs.resource.map(\.key) == rhs.resource.map(\.key) && lhs.resource.map(\.value) == rhs.resource.map(\.value)
    }
}
