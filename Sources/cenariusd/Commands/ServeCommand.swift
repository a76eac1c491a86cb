import ArgumentParser
import Daemon
import Logging
import ResourceCache
import RouteSync

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the daemon: sync on a timer, serve files and a JSON control API on loopback.",
        discussion: """
            GET /<uri> serves the resolved file (ETag, 304, Range, gzip). The control API lives under \
            /_cenarius/ (resolve, sync, status), plus /health and /metrics. SIGHUP reloads the \
            configuration and syncs; SIGTERM stops cleanly.

            Example:
              cenariusd serve --remote https://cdn.example.com/app/www --preset /opt/app/www --interval 300
              curl -X POST http://127.0.0.1:8700/_cenarius/sync
            """)

    @Option(help: "Port to listen on (0 picks a free one).") var port: Int = 8700
    @Option(help: "Address to bind; anything but loopback requires --token.") var bind: String = "127.0.0.1"
    @Option(help: ArgumentHelp("Seconds between periodic syncs (jittered).", valueName: "seconds")) var interval: Double = 300
    @Option(help: ArgumentHelp("Bearer token required on POSTs (env CENARIUS_TOKEN).", valueName: "token")) var token: String?
    @Option(help: "Log format: text or json.") var logFormat: String = "text"
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard ["text", "json"].contains(logFormat) else { throw ValidationError("--log-format must be text or json") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
        guard interval >= 1 else { throw ValidationError("--interval must be at least 1 second") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
    }

    func run() async throws {
        let settings = try await global.resolved()
        var options = DaemonOptions()
        options.bind = bind
        options.port = port
        options.interval = interval
        options.token = token ?? ProcessEnvironment()["CENARIUS_TOKEN"]
        options.jsonLogs = logFormat == "json"
        options.logLevel = Logger.Level(rawValue: logLevel)!
        if !ServeCommand.isLoopback(bind) && options.token == nil {
            throw CenariusError.usage("binding \(bind) exposes the daemon beyond this machine: pass --token (or CENARIUS_TOKEN)")
        }
        let global = global
        try await Daemon.run(settings: settings.sync, develop: settings.develop, options: options, reload: { () throws(CenariusError) in
            try await global.resolved().sync
        })
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "localhost" || address == "::1" || address.hasPrefix("127.")
    }
}
