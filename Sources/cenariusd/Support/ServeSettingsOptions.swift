import DeviceSettings
import ArgumentParser

/// `serve`'s settings of the table (`Settings.serve`): the daemon's own, which `config` shows too.
struct ServeSettingsOptions: ParsableArguments {
    @Option(help: .setting("port")) var port: Int?
    @Option(help: .setting("bind")) var bind: String?
    @Option(help: .setting("interval")) var interval: Double?
    @Option(help: .setting("token")) var token: String?
    @Option(help: .setting("log-format")) var logFormat: String?
    @Option(help: .setting("log-level")) var logLevel: String?
    @Option(help: .setting("allow-origin")) var allowOrigin: [String] = []
    @Option(help: .setting("health-max-age")) var healthMaxAge: Double?
    @Flag(inversion: .prefixedNo, help: .setting("fail-when-expired")) var failWhenExpired: Bool?
    @Option(help: .setting("immutable")) var immutable: [String] = []
    @Option(help: .setting("fallback")) var fallback: String?
    @Option(help: .setting("max-connections")) var maxConnections: Int?
    @Option(help: .setting("confirm-timeout")) var confirmTimeout: Double?
    @Option(help: .setting("health-cmd")) var healthCmd: String?
    @Option(help: .setting("health-url")) var healthUrl: String?
    @Option(help: .setting("on-switch")) var onSwitch: String?
    @Option(help: .setting("hook-timeout")) var hookTimeout: Double?
    @Option(help: .setting("start-jitter")) var startJitter: Double?
    @Option(help: .setting("report-url")) var reportUrl: String?
    @Option(help: .setting("download-window")) var downloadWindow: [String] = []
    @Option(help: .setting("metered")) var metered: String?
    @Option(help: .setting("metered-file")) var meteredFile: String?
    @Option(help: .setting("switch-window")) var switchWindow: [String] = []
    @Option(help: .setting("switch-at")) var switchAt: String?
    @Option(help: .setting("inhibit-file")) var inhibitFile: [String] = []
    @Option(help: .setting("bundle-dir")) var bundleDir: [String] = []
    @Option(help: .setting("peer-listen")) var peerListen: String?
    @Option(help: .setting("peer-allow")) var peerAllow: [String] = []
    @Option(help: .setting("peer-max-connections")) var peerMaxConnections: Int?
    @Option(help: .setting("peer-max-rate")) var peerMaxRate: Int?
    @Option(help: .setting("otlp-metrics-endpoint")) var otlpMetricsEndpoint: String?
    @Option(help: .setting("peer-discovery")) var peerDiscovery: String?

    func validate() throws { try SettingFlags.validate(flagValues) }

    var flagValues: [String: String] { SettingFlags.values(of: self) }
}
