package import Daemon
import Logging
package import ResourceCache
package import RouteSync
package import Settings
import Telemetry

/// What `serve`'s settings mean for the daemon, read at start and again at every SIGHUP: the
/// trial, the install policies, where events go, and what a reload hands the running daemon.
package enum ServeSettings {
    /// How the daemon runs: its listener, logs, schedule, request path and the rest of `serve`'s
    /// own settings, after precedence (their ranges are the table's, checked as they were read).
    package static func daemonOptions(_ source: SettingSource) throws(CenariusError) -> DaemonOptions {
        var options = DaemonOptions()
        options.bind = source.defaulted(source.string, "bind")
        options.port = source.defaulted(source.int, "port")
        options.interval = source.defaulted(source.double, "interval")
        options.startJitter = source.double("start-jitter")
        options.token = source.string("token")
        switch source.defaulted(source.string, "log-format") {
        case "text": options.jsonLogs = false
        case "json": options.jsonLogs = true
        default: throw .usage("--log-format must be text or json")
        }
        guard let level = Logger.Level(rawValue: source.defaulted(source.string, "log-level")) else {
            throw .usage("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        options.logLevel = level
        options.trial = trialOptions(source)
        options.reportURL = try reportURL(source)
        options.healthMaxAge = source.double("health-max-age")
        options.failWhenExpired = source.defaulted(source.bool, "fail-when-expired")
        options.immutable = source.strings("immutable") ?? []
        options.fallback = source.string("fallback")
        options.maxConnections = source.int("max-connections")
        options.bundleDirs = (source.strings("bundle-dir") ?? []).map(FileSystem.absolute)
        options.allowOrigins = (source.strings("allow-origin") ?? []).map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        options.peers = try peerOptions(source)
        switch source.defaulted(source.string, "peer-discovery") {
        case "auto": options.peerDiscovery = options.peers != nil
        case "on": options.peerDiscovery = true
        case "off": options.peerDiscovery = false
        default: throw .usage("--peer-discovery must be auto, on or off")
        }
        if !isLoopback(options.bind) && options.token == nil {
            throw .usage("binding \(options.bind) exposes the daemon beyond this machine: pass --token (or CENARIUS_TOKEN)")
        }
        return options
    }

    /// `--peer-listen` and its caps; nil: no peer listener (the default).
    static func peerOptions(_ source: SettingSource) throws(CenariusError) -> PeerServeOptions? {
        guard let listen = source.string("peer-listen"), !listen.isEmpty else { return nil }
        guard var options = PeerServeOptions(listen: listen) else {
            throw .usage("--peer-listen \(JSONText.quoted(listen)) must be ADDRESS:PORT (an IP address: 192.168.1.20:8701, [fd00::5]:8701, 0.0.0.0:8701)")
        }
        options.allowed = try (source.strings("peer-allow") ?? []).map { text throws(CenariusError) in
            guard let subnet = Subnet(cidr: text) else { throw .usage("--peer-allow \(JSONText.quoted(text)) must be ADDRESS/BITS (192.168.1.0/24)") }
            return subnet
        }
        options.maxConnections = source.defaulted(source.int, "peer-max-connections")
        options.maxRate = source.defaulted(source.int, "peer-max-rate")
        return options
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "localhost" || address == "::1" || address.hasPrefix("127.")
    }

    /// The sync's settings as the daemon (and `switch`, which acts for it) use them: with the
    /// install policies.
    package static func resolved(_ source: SettingSource) throws(CenariusError) -> ResolvedSettings {
        var settings = try ResolvedSettings.make(source)
        settings.sync.install = try installPolicy(source)
        settings.metrics = try MetricSettings.make(source, environment: ProcessEnvironment(), sync: settings.sync)
        if let listener = try peerOptions(source) {
            // Its own address in the list is not asked: it names the share this device fetches for the others.
            let urls = settings.sync.peers.urls
            settings.sync.peers = PeerSources(urls: urls.filter { !listener.isSelf($0) }, me: urls.first(where: listener.isSelf))
        }
        return settings
    }

    /// The trial settings after precedence (their ranges are the table's, checked as they were read).
    package static func trialOptions(_ source: SettingSource) -> TrialOptions {
        TrialOptions(confirmTimeout: source.double("confirm-timeout"), healthCommand: source.string("health-cmd"),
                     healthURL: source.string("health-url"), onSwitch: source.string("on-switch"),
                     hookTimeout: source.defaulted(source.double, "hook-timeout"))
    }

    /// The install policies after precedence: a window that can never open, or a typo, is a usage error now.
    package static func installPolicy(_ source: SettingSource) throws(CenariusError) -> InstallPolicy {
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

    /// An http(s) URL, checked at start: a typo is a usage error, not a report that never arrives.
    package static func reportURL(_ source: SettingSource) throws(CenariusError) -> String? {
        guard let url = source.string("report-url"), !url.isEmpty else { return nil }
        return try checkedHTTPURL(url, setting: "report-url")
    }

    /// An http(s) URL with something after the scheme and no space or control byte: a sink's or a
    /// collector's, which is never echoed (it may carry a password).
    package static func checkedHTTPURL(_ url: String, setting: String) throws(CenariusError) -> String {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > (lower.hasPrefix("https") ? 8 : 7),
              !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            // Not echoed: the URL may carry a password.
            throw .usage("\(setting) must be an http:// or https:// URL with no spaces")
        }
        return url
    }

    /// What a SIGHUP hands the running daemon: every setting as `reread` has it, but those the
    /// table reads at start only (`reloads: false`), which keep their value from `start` and are
    /// named for the log. The cache is the daemon's, whose lock is on it.
    package static func reloaded(_ reread: SettingSource, start: SettingSource, cache: CacheLayout) throws(CenariusError) -> ReloadableSettings {
        let settings = try resolved(reread)
        var sync = settings.sync
        sync.cache = cache
        return ReloadableSettings(sync: sync, trial: trialOptions(reread), trace: settings.trace, metrics: settings.metrics,
                                  unchanged: start.startOnlyChanges(in: reread))
    }
}
