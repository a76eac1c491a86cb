package import RouteSync

/// One setting, once: the key a config file uses, which is also the flag's name (`--key`) and,
/// upper-cased with underscores, the environment variable (`CENARIUS_KEY`); its type and range;
/// what it means (the flag's help, the man pages); its default; and whether a running daemon
/// takes a new value on SIGHUP. The fast command line (`FastPath`) and the regular one
/// (swift-configuration) both decode through it, so a value means the same whichever path reads
/// it; the options of the regular one take their help from it and are read back by key
/// (`SettingFlags`); the defaults are the last source of every reading (`SettingSource`).
package struct Setting: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        case string, int, double, bool
        /// Repeatable: flags given more than once, a config-file array, or one value per line.
        case list
    }

    package let key: String
    package let kind: Kind
    /// For `.int` and `.double`: the values that make sense. A number from outside past them
    /// (`"timeout": 1e300`) is a usage error naming the setting, never a trap further in.
    package let range: ClosedRange<Double>?
    /// The flag's value in help texts (`--connections <n>`); nil for a switch.
    package let valueName: String?
    /// What the setting means, in a sentence or two.
    package let help: String
    /// The value when nothing sets it, as every reading gets it.
    package let defaultValue: SettingValue?
    /// The default in words when it is not one value (`$XDG_CACHE_HOME/cenarius`), else nil.
    package let defaultWords: String?
    /// False: read once at start; a running daemon keeps its value across SIGHUP.
    package let reloads: Bool

    package init(_ key: String, _ kind: Kind, _ range: ClosedRange<Double>? = nil, value valueName: String? = nil,
                 default defaultValue: SettingValue? = nil, defaultWords: String? = nil, reloads: Bool = true, _ help: String) {
        self.key = key
        self.kind = kind
        self.range = range
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.defaultWords = defaultWords
        self.reloads = reloads
    }

    /// The default as help texts and the documentation say it; nil when there is none.
    package var defaultText: String? {
        if let defaultWords { return defaultWords }
        switch defaultValue {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .double(let value): return Whole.text(value)
        case .bool(let value): return value ? "on" : "off"
        case .list(let values): return values.joined(separator: ", ")
        case nil: return nil
        }
    }

    /// The help with its default: what `--help` and the man pages print.
    package var helpText: String {
        guard let defaultText else { return help }
        return help + " Default: \(defaultText)."
    }

    /// A year in seconds: the longest any time setting sensibly is.
    package static let year = 31_536_000.0

    /// `value` when it is in `range`; else a usage error naming where it came from and the range.
    package func check(_ value: Double, origin: String) throws(CenariusError) {
        guard let range, !range.contains(value) else { return }
        throw .usage("\(origin) \(Whole.text(value)) is out of range: \(key) must be \(Whole.text(range.lowerBound))...\(Whole.text(range.upperBound))")
    }

    package var flag: String { "--" + key }
    package var environmentName: String { "CENARIUS_" + String(key.uppercased().map { $0 == "-" ? "_" : $0 }) }

    /// A string from a flag or the environment as this setting's type; `origin` names where it
    /// came from in the message when it does not decode.
    package func decode(_ raw: String, origin: String) throws(CenariusError) -> SettingValue {
        switch kind {
        case .string: return .string(raw)
        case .list: return .list(SettingSource.lines(raw))
        case .int:
            guard let value = Int(raw.trimmingSpaces) else { throw .usage("\(origin) \(JSONText.quoted(raw)) is not a whole number") }
            try check(Double(value), origin: origin)
            return .int(value)
        case .double:
            guard let value = Double(raw.trimmingSpaces), value.isFinite else { throw .usage("\(origin) \(JSONText.quoted(raw)) is not a number") }
            try check(value, origin: origin)
            return .double(value)
        case .bool:
            guard let value = Self.bool(raw) else { throw .usage("\(origin) \(JSONText.quoted(raw)) is not true or false (also yes/no, on/off, 1/0)") }
            return .bool(value)
        }
    }

    /// The spellings systemd units, shells and Docker files use for a switch.
    static func bool(_ raw: String) -> Bool? {
        switch raw.trimmingSpaces.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }
}

extension Setting.Kind {
    /// What a config file's value must be, as messages and the man page say it.
    package var spoken: String {
        switch self {
        case .string: "a string"
        case .int: "a whole number"
        case .double: "a number"
        case .bool: "true or false"
        case .list: "a string or an array of strings"
        }
    }
}

/// A setting's value in its type.
package enum SettingValue: Sendable, Hashable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case list([String])

    /// The value as a flag or a variable spells it, which `Setting.decode` reads back.
    package var raw: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .list(let items): items.joined(separator: "\n")
        }
    }
}

/// Every setting the command line, the environment and the config file know.
package enum Settings {
    /// Shared by every command.
    package static let shared: [Setting] = [
        Setting("remote", .list, value: "url", "Remote folder URL holding the route table (http, https or file); repeat it for mirrors, tried in order."),
        Setting("preset", .string, value: "dir", default: .string("./www"), "Preset folder shipped with the app."),
        Setting("cache", .string, value: "dir", defaultWords: "$XDG_CACHE_HOME/cenarius", reloads: false, "Cache folder."),
        Setting("develop", .bool, default: .bool(false), reloads: false, "Develop mode: serve the develop folder as it is, no table, no network."),
        Setting("develop-dir", .string, value: "dir", defaultWords: "$HOME/Documents/www", reloads: false, "Develop folder."),
        Setting("public-key", .list, value: "file", "Ed25519 public key file; tables must then be signed. Repeatable: every key given is trusted."),
        Setting("signatures-required", .int, 1...64, value: "n", default: .int(1), "Valid signatures from distinct trusted keys a table needs."),
        Setting("connections", .int, 1...256, value: "n", default: .int(16), "Parallel connections to the origin."),
        Setting("timeout", .int, 1...86_400, value: "seconds", default: .int(30), "Connect timeout and stall limit in seconds."),
        Setting("routes-name", .string, value: "name", default: .string("Routes.json"), "File name of the route table."),
        Setting("channel", .string, value: "name", default: .string("default"), "The channel this device follows: another than the default polls its head (Routes.CHANNEL.head) alone."),
        Setting("max-file-size", .int, 1...Double(ByteCount.limit), value: "bytes", default: .int(256 << 20), "Largest file accepted, in bytes."),
        Setting("min-refetch", .double, 0...Setting.year, value: "seconds", default: .double(10), "Seconds between two refreshes triggered by lookups."),
        Setting("user-agent", .string, value: "text", defaultWords: "cenariusd/<version>", "User-Agent sent to the origin."),
        Setting("keep", .int, 1...10_000, value: "n", default: .int(2), "Generations kept, the current one included."),
        Setting("grace", .double, 0...Setting.year, value: "seconds", default: .double(600), "Seconds a handed-out path stays valid after a switch."),
        Setting("device-id", .string, value: "id", defaultWords: "/etc/machine-id, else a random id kept in the cache", "This device's id for staged rollouts."),
        Setting("native-version", .string, value: "version", "The host's version, compared with a release's requires.native (e.g. 2.3.0)."),
        Setting("cacert", .string, value: "file", "PEM bundle of CAs to trust for https remotes, instead of the system's."),
        Setting("client-cert", .string, value: "file", "Client certificate (PEM) for origins that require TLS client authentication."),
        Setting("client-key", .string, value: "file", "Private key (PEM) of --client-cert, if not in the certificate's file."),
        Setting("header", .list, value: "'Name: value'", "Request header sent to the remotes' hosts only (never after a redirect to another host); repeatable."),
        Setting("max-rate", .int, 0...Double(ByteCount.limit), value: "bytes", default: .int(0), "Cap on download speed in bytes per second across all transfers (0: none)."),
        Setting("report", .bool, default: .bool(true), "Send the device's state (Cenarius-Report) with each table request."),
        Setting("otlp-endpoint", .string, value: "url", defaultWords: "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; none: no traces",
                "An OpenTelemetry collector's OTLP/HTTP traces URL: each sync is sent there as a trace (docs/telemetry.md)."),
        Setting("otlp-header", .list, value: "'Name: value'", defaultWords: "those of $OTEL_EXPORTER_OTLP_HEADERS",
                "Request header sent with each export of traces and metrics (a collector's API key); repeatable."),
        Setting("trace-sampler", .string, value: "sampler", defaultWords: "$OTEL_TRACES_SAMPLER, else parentbased_always_on",
                "Which syncs are traced: always_on, always_off or traceidratio:RATIO, each also with parentbased_ before it."),
        Setting("report-in", .string, value: "where", default: .string("header"),
                "Where the report goes: header (every poll), or query too: a short form in the head poll's query string once an hour, for logs that keep no headers (S3, CloudFront)."),
        Setting("peer", .list, value: "url", "A LAN peer (http://HOST:PORT, its --peer-listen) to take store objects from before the origin, each checked against the signed table; repeatable."),
    ]
    /// `serve`'s own.
    package static let serve: [Setting] = [
        Setting("port", .int, 0...65535, value: "port", default: .int(8700), reloads: false, "Port to listen on (0 picks a free one)."),
        Setting("bind", .string, value: "address", default: .string("127.0.0.1"), reloads: false, "Address to bind; anything but loopback requires --token."),
        Setting("interval", .double, 1...Setting.year, value: "seconds", default: .double(300), reloads: false, "Seconds between periodic syncs (jittered)."),
        Setting("token", .string, value: "token", reloads: false, "Bearer token required on POSTs."),
        Setting("log-format", .string, value: "format", default: .string("text"), reloads: false, "Log format: text or json."),
        Setting("log-level", .string, value: "level", default: .string("info"), reloads: false,
                "Log level: trace, debug, info, notice, warning, error, critical."),
        Setting("allow-origin", .list, value: "origin", reloads: false,
                "An origin (scheme://host[:port]) whose pages may use the control API; repeatable. Pages of other origins cannot."),
        Setting("health-max-age", .double, 0.001...Setting.year, value: "seconds", reloads: false,
                "/health answers 503 when no sync reached the remote for this many seconds."),
        Setting("fail-when-expired", .bool, default: .bool(false), reloads: false,
                "/health answers 503 while the signed table in force has expired (routes --expires), not only says so."),
        Setting("immutable", .list, value: "glob", reloads: false,
                "Uris matching this glob (e.g. 'assets/*-*.js') are served with Cache-Control: max-age=31536000, immutable; repeatable."),
        Setting("fallback", .string, value: "uri", reloads: false, "The uri that answers unknown paths naming no file (a single-page app's index.html)."),
        Setting("max-connections", .int, 1...1_000_000, value: "count", defaultWords: "half the open-files limit, at most 1024", reloads: false,
                "Open connections at most; past it the one idle longest is closed."),
        Setting("confirm-timeout", .double, 0.001...Setting.year, value: "seconds", defaultWords: "none: no trials (60 s when only a health check is set)",
                "Each switch is on trial until the app confirms it (POST /_cenarius/ready) within this many seconds; else it is rolled back."),
        Setting("health-cmd", .string, value: "command", "Run after each switch; exit 0 within the confirm timeout confirms the trial, anything else rolls back."),
        Setting("health-url", .string, value: "url", "After each switch, a 2xx from this URL within the confirm timeout confirms the trial."),
        Setting("on-switch", .string, value: "command", "Run after every switch (commit or rollback) with CENARIUS_GENERATION, CENARIUS_PREVIOUS, CENARIUS_REASON."),
        Setting("hook-timeout", .double, 0.001...Setting.year, value: "seconds", default: .double(30),
                "Seconds an --on-switch command may run before it is killed with its children; commands still running when the daemon stops are killed too."),
        Setting("start-jitter", .double, 0...Setting.year, value: "seconds", defaultWords: "the smaller of --interval and 60 s", reloads: false,
                "With a table in force, the first sync waits a random moment up to this many seconds."),
        Setting("report-url", .string, value: "url", reloads: false,
                "POST the daemon's events (committed, confirmed, rolled-back, ...) here as CloudEvents batches, queued on disk until a 2xx."),
        Setting("download-window", .list, value: "window", defaultWords: "none: download at any time",
                "Download releases only within this local-time window (daily 22:00-06:00, Mon-Fri 01:00-05:00); repeatable, any one open is enough."),
        Setting("metered", .string, value: "policy", default: .string("allow"),
                "On a metered link: defer downloads, allow them, or small:SIZE (allow a release whose transfer is under SIZE, like small:5M)."),
        Setting("metered-file", .string, value: "file", "The link is metered while this file exists (when NetworkManager does not say)."),
        Setting("switch-window", .list, value: "window", defaultWords: "none: switch at any time",
                "Switch to a downloaded release only within this local-time window; repeatable."),
        Setting("switch-at", .string, value: "when", default: .string("any"),
                "any, or start: a downloaded release switches at the daemon's next start or on POST /_cenarius/switch."),
        Setting("inhibit-file", .list, value: "file", "While any of these files exists, switches wait (an app creates one while a customer is at the screen); repeatable."),
        Setting("bundle-dir", .list, value: "dir", reloads: false,
                "Watch this folder (and three levels below it: a stick mounted under it) for offline bundles and import each within seconds; repeatable."),
        Setting("peer-listen", .string, value: "address:port", reloads: false,
                "Serve the store objects this cache holds to LAN peers on this address (off by default; read-only, objects only)."),
        Setting("peer-allow", .list, value: "cidr", defaultWords: "the listening interface's subnet", reloads: false,
                "Addresses (e.g. 192.168.1.0/24) allowed to take objects from --peer-listen; repeatable."),
        Setting("peer-max-connections", .int, 1...4096, value: "count", default: .int(16), reloads: false,
                "Peer connections at once; past it a new one is closed."),
        Setting("peer-discovery", .string, value: "when", default: .string("auto"), reloads: false,
                "Find LAN peers by DNS-SD (_cenarius._tcp through avahi-daemon) and announce --peer-listen: auto (with --peer-listen), on, or off."),
        Setting("peer-max-rate", .int, 0...Double(ByteCount.limit), value: "bytes", default: .int(4 << 20), reloads: false,
                "Bytes per second served to peers, all connections together (0: no cap)."),
        Setting("otlp-metrics-endpoint", .string, value: "url",
                defaultWords: "$OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, else $OTEL_EXPORTER_OTLP_ENDPOINT/v1/metrics unless $OTEL_METRICS_EXPORTER is none; none: no OTLP metrics",
                "An OpenTelemetry collector's OTLP/HTTP metrics URL: the figures of GET /metrics are sent there every $OTEL_METRIC_EXPORT_INTERVAL ms, 60 s by default (docs/telemetry.md)."),
    ]
    package static let all = shared + serve
    package static let byKey = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
    /// Every key a config file may hold.
    package static let keys = Set(all.map(\.key))
    /// The defaults that are one value, by key: the last source of every reading.
    package static let defaults = all.reduce(into: [String: SettingValue]()) { $0[$1.key] = $1.defaultValue }

    /// Raw strings by key (flags) decoded; keys the table does not hold are left out.
    package static func decodeFlags(_ raw: [String: String]) throws(CenariusError) -> [String: SettingValue] {
        var values: [String: SettingValue] = [:]
        for (key, text) in raw {
            guard let setting = byKey[key] else { continue }
            values[key] = try setting.decode(text, origin: setting.flag)
        }
        return values
    }

    /// The `CENARIUS_*` variables of the table, decoded. Others (`CENARIUS_TOKEN`, `CENARIUS_CONFIG`)
    /// are read where they are used.
    package static func decodeEnvironment(_ environment: ProcessEnvironment) throws(CenariusError) -> [String: SettingValue] {
        var values: [String: SettingValue] = [:]
        for setting in all {
            guard let text = environment[setting.environmentName] else { continue }
            values[setting.key] = try setting.decode(text, origin: setting.environmentName)
        }
        return values
    }
}
