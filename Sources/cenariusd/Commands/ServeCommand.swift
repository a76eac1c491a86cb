import ArgumentParser
import Daemon
import DeviceSettings
import Logging
import ResourceCache
import RouteSync
import Settings
import Telemetry

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the daemon: sync on a timer, serve files and a JSON control API on loopback.",
        discussion: """
            GET /<uri> serves the resolved file (ETag, 304, Range, gzip). The control API lives under \
            /_cenarius/ (resolve, sync, status, ready, events), plus /health and /metrics. SIGHUP \
            reloads the configuration and syncs; SIGTERM stops cleanly.

            With --confirm-timeout, --health-cmd or --health-url every switch is on trial: the app \
            confirms the generation it loaded (POST /_cenarius/ready {"generation": N}, or \
            `cenariusd confirm`), else the daemon rolls back to the last confirmed generation.

            Example:
              cenariusd serve --remote https://cdn.example.com/app/www --preset /opt/app/www --interval 300
              curl -X POST http://127.0.0.1:8700/_cenarius/sync
              cenariusd serve --remote https://cdn.example.com/app/www --confirm-timeout 120
            """)

    @OptionGroup var serveSettings: ServeSettingsOptions
    @OptionGroup var global: GlobalOptions

    /// This command's own settings by key, for the precedence chain (flag > CENARIUS_* > config file).
    var commandFlags: [String: String] { serveSettings.flagValues }

    func run() async throws {
        let source = try await global.source(commandFlags: commandFlags)
        let settings = try ServeSettings.resolved(source)
        let options = try ServeSettings.daemonOptions(source)
        let (global, flags, cache) = (global, commandFlags, settings.sync.cache)
        let telemetry = TelemetryControl(settings.trace)
        defer { telemetry.shutdown() }
        let metrics = MetricExporter(settings.metrics)
        try await Daemon.run(settings: settings.sync, develop: settings.develop, options: options, reload: { () throws(CenariusError) in
            // Everything again, flags included, as at start.
            let reloaded = try ServeSettings.reloaded(try await global.source(commandFlags: flags), start: source, cache: cache)
            telemetry.apply(reloaded.trace)
            metrics.apply(reloaded.metrics)
            return reloaded
        }, metricExport: metrics)
    }
}
