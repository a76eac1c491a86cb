import ReportHeader
package import ResourceCache
package import RouteSync
package import Settings
package import Telemetry
import Transport

extension TraceSettings {
    /// Traces' settings after precedence: cenariusd's (flag, `CENARIUS_*`, config file), then
    /// OpenTelemetry's standard variables; nil when neither names a collector.
    package static func make(_ source: SettingSource, environment: ProcessEnvironment, sync: SyncSettings) throws(CenariusError) -> TraceSettings? {
        guard let endpoint = source.string("otlp-endpoint").flatMap({ $0.isEmpty ? nil : $0 })
            ?? endpoint(traces: environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], base: environment["OTEL_EXPORTER_OTLP_ENDPOINT"])
        else { return nil }
        var settings = TraceSettings(endpoint: try ServeSettings.checkedHTTPURL(endpoint, setting: "otlp-endpoint"))
        // Checked and registered as secrets as `--header`'s are: a collector's key never reaches a
        // log line, an error or a span, and no line can split the export request (G11).
        settings.headers = try (source.strings("otlp-header")
            ?? pairs(environment["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] ?? environment["OTEL_EXPORTER_OTLP_HEADERS"] ?? "").map { "\($0.key): \($0.value)" })
            .map { line throws(CenariusError) in try ResolvedSettings.checkedHeader(line, setting: "otlp-header") }
        if let name = source.string("trace-sampler") ?? environment["OTEL_TRACES_SAMPLER"] {
            guard let sampler = Sampler(name, argument: environment["OTEL_TRACES_SAMPLER_ARG"]) else {
                throw .usage("trace-sampler must be always_on, always_off or traceidratio:RATIO (0 to 1), each may start with parentbased_")
            }
            settings.sampler = sampler
        }
        settings.caFile = environment["OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"] ?? environment["OTEL_EXPORTER_OTLP_CERTIFICATE"]
        if let delay = environment["OTEL_BSP_SCHEDULE_DELAY"].flatMap(Double.init), delay >= 1, delay <= 3_600_000 { settings.delay = delay / 1000 }
        if let size = environment["OTEL_BSP_MAX_QUEUE_SIZE"].flatMap(Int.init), size >= 1, size <= 65_536 { settings.queueSize = size }
        settings.resource = resource(environment: environment, sync: sync)
        return settings
    }

    /// The device as its traces name it: its hashed id (never the id, as in the reports), its
    /// channel and cenariusd's version; `OTEL_RESOURCE_ATTRIBUTES` adds to them, and
    /// `OTEL_SERVICE_NAME` names the service.
    static func resource(environment: ProcessEnvironment, sync: SyncSettings) -> [(key: String, value: String)] {
        let given = pairs(environment["OTEL_RESOURCE_ATTRIBUTES"] ?? "")
        let service = environment["OTEL_SERVICE_NAME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? given.first { $0.key == "service.name" }?.value ?? "cenariusd"
        var resource: [(key: String, value: String)] = [
            ("service.name", service),
            ("service.version", CenariusVersion.string),
            ("cenarius.device", FleetReport.deviceHash(sync.rollout.device(layout: sync.cache).id)),
            ("cenarius.channel", sync.channel),
        ]
        for pair in given where !resource.contains(where: { $0.key == pair.key }) { resource.append(pair) }
        return resource
    }
}

extension MetricSettings {
    /// The daemon's OTLP metrics after precedence: `otlp-metrics-endpoint`, else OpenTelemetry's
    /// standard variables unless `OTEL_METRICS_EXPORTER` leaves `otlp` out; nil when neither names
    /// a collector. Headers, CA bundle and resource are the traces'.
    package static func make(_ source: SettingSource, environment: ProcessEnvironment, sync: SyncSettings) throws(CenariusError) -> MetricSettings? {
        let exporters = (environment["OTEL_METRICS_EXPORTER"] ?? "otlp").split(separator: ",").map(\.trimmingSpaces)
        let given = source.string("otlp-metrics-endpoint").flatMap { $0.isEmpty ? nil : $0 }
        guard let endpoint = given ?? (exporters.contains("otlp")
            ? TraceSettings.endpoint(environment["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"], base: environment["OTEL_EXPORTER_OTLP_ENDPOINT"], path: "v1/metrics")
            : nil)
        else { return nil }
        var settings = MetricSettings(endpoint: try ServeSettings.checkedHTTPURL(endpoint, setting: "otlp-metrics-endpoint"))
        settings.headers = try (source.strings("otlp-header")
            ?? TraceSettings.pairs(environment["OTEL_EXPORTER_OTLP_METRICS_HEADERS"] ?? environment["OTEL_EXPORTER_OTLP_HEADERS"] ?? "").map { "\($0.key): \($0.value)" })
            .map { line throws(CenariusError) in try ResolvedSettings.checkedHeader(line, setting: "otlp-header") }
        settings.caFile = environment["OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE"] ?? environment["OTEL_EXPORTER_OTLP_CERTIFICATE"]
        if let interval = environment["OTEL_METRIC_EXPORT_INTERVAL"].flatMap(Double.init), interval >= 1, interval <= 3_600_000 {
            settings.interval = interval / 1000
        }
        settings.resource = TraceSettings.resource(environment: environment, sync: sync)
        return settings
    }
}
