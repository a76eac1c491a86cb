import ArgumentParser
import Daemon
import Daemon
import Logging
import ResourceCache
import RouteSync
import Settings

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

    @Option(help: "Port to listen on (0 picks a free one).") var port: Int = 8700
    @Option(help: "Address to bind; anything but loopback requires --token.") var bind: String = "127.0.0.1"
    @Option(help: ArgumentHelp("Seconds between periodic syncs (jittered).", valueName: "seconds")) var interval: Double = 300
    @Option(help: ArgumentHelp("Bearer token required on POSTs (env CENARIUS_TOKEN).", valueName: "token")) var token: String?
    @Option(help: "Log format: text or json.") var logFormat: String = "text"
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"
    @Option(help: ArgumentHelp("An origin (scheme://host[:port]) whose pages may use the control API; repeatable. Pages of other origins cannot.", valueName: "origin"))
    var allowOrigin: [String] = []
    @Option(help: ArgumentHelp("/health answers 503 when no sync reached the remote for this many seconds.", valueName: "seconds"))
    var healthMaxAge: Double?
    @Flag(help: "/health answers 503 while the signed table in force has expired (routes --expires), not only says so.")
    var failWhenExpired = false
    @Option(help: ArgumentHelp("Uris matching this glob (e.g. 'assets/*-*.js') are served with Cache-Control: max-age=31536000, immutable; repeatable.", valueName: "glob"))
    var immutable: [String] = []
    @Option(help: ArgumentHelp("The uri that answers unknown paths naming no file (a single-page app's index.html).", valueName: "uri"))
    var fallback: String?
    @Option(help: ArgumentHelp("Open connections at most; past it the one idle longest is closed (default: half the open-files limit, at most 1024).", valueName: "count"))
    var maxConnections: Int?
    @OptionGroup var serveSettings: ServeSettingsOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard ["text", "json"].contains(logFormat) else { throw ValidationError("--log-format must be text or json") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical") }
        guard interval >= 1, interval <= Setting.year else { throw ValidationError("--interval must be 1 second to a year (31536000)") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let healthMaxAge, !(healthMaxAge > 0 && healthMaxAge <= Setting.year) {
            throw ValidationError("--health-max-age must be a positive number of seconds, at most a year (31536000)")
        }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
    }

    /// This command's own settings by key, for the precedence chain (flag > CENARIUS_* > config file).
    var commandFlags: [String: String] { serveSettings.flagValues }

    /// The trial settings after precedence (their ranges are the table's, checked as they were read).
    static func trialOptions(_ source: SettingSource) -> TrialOptions {
        TrialOptions(confirmTimeout: source.double("confirm-timeout"), healthCommand: source.string("health-cmd"),
                     healthURL: source.string("health-url"), onSwitch: source.string("on-switch"),
                     hookTimeout: source.defaulted(source.double, "hook-timeout"))
    }

    /// The install policies after precedence: a window that can never open, or a typo, is a usage error now.
    static func installPolicy(_ source: SettingSource) throws(CenariusError) -> InstallPolicy {
        var policy = InstallPolicy()
        policy.downloadWindows = try (source.strings("download-window") ?? []).map { text throws(CenariusError) in try TimeWindow(text) }
        policy.switchWindows = try (source.strings("switch-window") ?? []).map { text throws(CenariusError) in try TimeWindow(text) }
        policy.metered = try InstallPolicy.Metered(source.defaulted(source.string, "metered"))
        policy.meteredFile = source.string("metered-file")
        policy.meteredProbe = NetworkManager.metered
        switch source.defaulted(source.string, "switch-at") {
        case "any": policy.switchAtStart = false
        case "start": policy.switchAtStart = true
        default: throw .usage("--switch-at must be any or start")
        }
        policy.inhibitFiles = source.strings("inhibit-file") ?? []
        return policy
    }

    func run() async throws {
        let source = try await global.source(commandFlags: commandFlags)
        var settings = try ResolvedSettings.make(source)
        settings.sync.install = try ServeCommand.installPolicy(source)
        var options = DaemonOptions()
        options.bind = bind
        options.port = port
        options.interval = interval
        options.startJitter = source.double("start-jitter")
        options.token = token ?? ProcessEnvironment()["CENARIUS_TOKEN"]
        options.jsonLogs = logFormat == "json"
        options.logLevel = Logger.Level(rawValue: logLevel)!
        options.trial = ServeCommand.trialOptions(source)
        options.reportURL = try ServeCommand.reportURL(source)
        options.healthMaxAge = healthMaxAge
        options.failWhenExpired = failWhenExpired
        options.immutable = immutable
        options.fallback = fallback
        options.maxConnections = maxConnections
        options.allowOrigins = allowOrigin.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if !ServeCommand.isLoopback(bind) && options.token == nil {
            throw CenariusError.usage("binding \(bind) exposes the daemon beyond this machine: pass --token (or CENARIUS_TOKEN)")
        }
        let (global, flags, cache) = (global, commandFlags, settings.sync.cache)
        try await Daemon.run(settings: settings.sync, develop: settings.develop, options: options, reload: { () throws(CenariusError) in
            // Everything again, flags included, as at start: the trial settings are serve's own.
            let reread = try await global.source(commandFlags: flags)
            var sync = try ResolvedSettings.make(reread).sync
            sync.cache = cache
            sync.install = try ServeCommand.installPolicy(reread)
            return ReloadableSettings(sync: sync, trial: ServeCommand.trialOptions(reread), unchanged: source.startOnlyChanges(in: reread))
        })
    }

    /// An http(s) URL, checked at start: a typo is a usage error, not a report that never arrives.
    static func reportURL(_ source: SettingSource) throws(CenariusError) -> String? {
        guard let url = source.string("report-url"), !url.isEmpty else { return nil }
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > (lower.hasPrefix("https") ? 8 : 7),
              !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            // Not echoed: the URL may carry a password.
            throw .usage("report-url must be an http:// or https:// URL with no spaces")
        }
        return url
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "localhost" || address == "::1" || address.hasPrefix("127.")
    }
}
