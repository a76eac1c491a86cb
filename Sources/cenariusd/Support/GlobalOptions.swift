import ArgumentParser
import ResourceCache
import RouteSync
import Settings

#if canImport(Glibc)
import Glibc
#endif

/// The options every command shares. Each is optional here so that precedence can be
/// applied afterwards: flag > `CENARIUS_*` environment > config file > default.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Remote folder URL holding the route table (http, https or file); repeat it for mirrors, tried in order.", valueName: "url"))
    var remote: [String] = []

    @Option(help: ArgumentHelp("Preset folder shipped with the app (default ./www).", valueName: "dir"))
    var preset: String?

    @Option(help: ArgumentHelp("Cache folder (default $XDG_CACHE_HOME/cenarius).", valueName: "dir"))
    var cache: String?

    @Flag(inversion: .prefixedNo, help: "Develop mode: serve the develop folder as it is, no table, no network.")
    var develop: Bool?

    @Option(help: ArgumentHelp("Develop folder (default $HOME/Documents/www).", valueName: "dir"))
    var developDir: String?

    @Flag(inversion: .prefixedNo, help: "Send the device's state (Cenarius-Report) with each table request (default on).")
    var report: Bool?

    @Option(help: ArgumentHelp("JSON config file (default $XDG_CONFIG_HOME/cenarius/config.json if present).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Ed25519 public key file; tables must then be signed. Repeatable: every key given is trusted.", valueName: "file"))
    var publicKey: [String] = []

    @Option(help: ArgumentHelp("Valid signatures from distinct trusted keys a table needs (default 1).", valueName: "n"))
    var signaturesRequired: Int?

    @Option(help: ArgumentHelp("Parallel connections to the origin (default 16).", valueName: "n"))
    var connections: Int?

    @Option(help: ArgumentHelp("Connect timeout and stall limit in seconds (default 30).", valueName: "seconds"))
    var timeout: Int?

    @Option(help: ArgumentHelp("File name of the route table (default Routes.json).", valueName: "name"))
    var routesName: String?

    @Option(help: ArgumentHelp("Largest file accepted, in bytes (default 268435456).", valueName: "bytes"))
    var maxFileSize: Int64?

    @Option(help: ArgumentHelp("Seconds between two refreshes triggered by lookups (default 10).", valueName: "seconds"))
    var minRefetch: Double?

    @Option(help: ArgumentHelp("User-Agent sent to the origin.", valueName: "text"))
    var userAgent: String?

    @Option(help: ArgumentHelp("Generations kept, the current one included (default 2).", valueName: "n"))
    var keep: Int?

    @Option(help: ArgumentHelp("Seconds a handed-out path stays valid after a switch (default 600).", valueName: "seconds"))
    var grace: Double?

    @Option(help: ArgumentHelp("This device's id for staged rollouts (default /etc/machine-id, else a random id kept in the cache).", valueName: "id"))
    var deviceId: String?

    @Option(help: ArgumentHelp("The host's version, compared with a release's requires.native (e.g. 2.3.0).", valueName: "version"))
    var nativeVersion: String?

    @Option(help: ArgumentHelp("PEM bundle of CAs to trust for https remotes, instead of the system's.", valueName: "file"))
    var cacert: String?

    @Option(help: ArgumentHelp("Client certificate (PEM) for origins that require TLS client authentication.", valueName: "file"))
    var clientCert: String?

    @Option(help: ArgumentHelp("Private key (PEM) of --client-cert, if not in the certificate's file.", valueName: "file"))
    var clientKey: String?

    @Option(help: ArgumentHelp("Request header sent to the remotes' hosts only (never after a redirect to another host); repeatable.", valueName: "'Name: value'"))
    var header: [String] = []

    @Option(help: ArgumentHelp("Cap on download speed in bytes per second across all transfers (default 0: none).", valueName: "bytes"))
    var maxRate: Int64?

    func validate() throws {
        if let connections, !(1...256).contains(connections) { throw ValidationError("--connections must be 1...256") }
        if let timeout, timeout < 1 { throw ValidationError("--timeout must be at least 1 second") }
        if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
        if let maxFileSize, maxFileSize < 1 { throw ValidationError("--max-file-size must be positive") }
        if let signaturesRequired, signaturesRequired < 1 { throw ValidationError("--signatures-required must be at least 1") }
        if let maxRate, maxRate < 0 { throw ValidationError("--max-rate must be 0 (no cap) or a number of bytes per second") }
    }

    /// The flags given, as raw strings by setting key (the keys of the config file).
    var flagValues: [String: String] {
        var values: [String: String] = [:]
        values["remote"] = remote.isEmpty ? nil : remote.joined(separator: "\n")
        values["preset"] = preset
        values["cache"] = cache
        values["develop"] = develop.map { $0 ? "true" : "false" }
        values["develop-dir"] = developDir
        values["report"] = report.map { $0 ? "true" : "false" }
        values["public-key"] = publicKey.isEmpty ? nil : publicKey.joined(separator: "\n")
        values["signatures-required"] = signaturesRequired.map(String.init)
        values["connections"] = connections.map(String.init)
        values["timeout"] = timeout.map(String.init)
        values["routes-name"] = routesName
        values["max-file-size"] = maxFileSize.map(String.init)
        values["min-refetch"] = minRefetch.map { String($0) }
        values["user-agent"] = userAgent
        values["keep"] = keep.map(String.init)
        values["grace"] = grace.map { String($0) }
        values["device-id"] = deviceId
        values["native-version"] = nativeVersion
        values["cacert"] = cacert
        values["client-cert"] = clientCert
        values["client-key"] = clientKey
        values["header"] = header.isEmpty ? nil : header.joined(separator: "\n")
        values["max-rate"] = maxRate.map(String.init)
        return values
    }

    /// Applies the precedence chain and returns the settings every command works with.
    func resolved() async throws(CenariusError) -> ResolvedSettings {
        try ResolvedSettings.make(await source())
    }

    /// Every setting by key in precedence order: these flags and `commandFlags` (a command's own
    /// options, by setting key), then `CENARIUS_*`, then the config file.
    func source(commandFlags: [String: String] = [:]) async throws(CenariusError) -> SettingSource {
        let environment = ProcessEnvironment()
        return try await .regular(flags: flagValues.merging(commandFlags) { $1 }, environment: environment,
                                  configFile: environment.configFile(flag: config))
    }
}

/// Settings after precedence: what the commands use.
struct ResolvedSettings: Sendable {
    var sync: SyncSettings
    var develop: ServedFolder?

    func resolver() -> Resolver { Resolver(settings: sync, developFolder: develop) }

    /// The one mapping from setting keys to settings, whatever the source.
    static func make(_ source: SettingSource) throws(CenariusError) -> ResolvedSettings {
        let environment = ProcessEnvironment()
        let routesName = source.string("routes-name") ?? "Routes.json"
        guard !routesName.isEmpty, !routesName.contains("/") else { throw .usage("--routes-name must be a plain file name") }
        // URLs hold no whitespace (Remote refuses it), so a list may also come as one spaced string.
        let remotes = try (source.strings("remote") ?? []).flatMap { $0.split(whereSeparator: \.isWhitespace) }
            .map { url throws(CenariusError) in try Remote(String(url), routesName: routesName) }
        // Absolute, so that every path handed out works from any working directory.
        let cacheRoot = FileSystem.absolute(source.string("cache") ?? environment.cacheHome + "/cenarius")
        let presetRoot = FileSystem.absolute(source.string("preset") ?? "./www")
        var sync = SyncSettings(remote: remotes.first, cache: CacheLayout(root: cacheRoot), preset: Preset(root: presetRoot, routesName: routesName))
        if let n = source.int("connections") { sync.transfer.connections = n }
        if let t = source.int("timeout") { sync.transfer.timeout = t }
        if let size = source.int("max-file-size") { sync.transfer.maxFileSize = Int64(size) }
        if let agent = source.string("user-agent") { sync.transfer.userAgent = agent }
        if let seconds = source.double("min-refetch") { sync.minRefetch = seconds }
        if let n = source.int("keep") { sync.keepGenerations = max(1, n) }
        if let seconds = source.double("grace") { sync.grace = seconds }
        sync.mirrors = Array(remotes.dropFirst())
        try applyTransport(source, to: &sync)
        let keyPaths = source.strings("public-key") ?? []
        let required = source.int("signatures-required") ?? 1
        if required < 1 { throw .usage("--signatures-required must be at least 1") }
        if !keyPaths.isEmpty { sync.tableVerifier = try TableSignatureVerifier(publicKeyFiles: keyPaths, required: required) }
        else if required > 1 { throw .usage("--signatures-required \(required) needs --public-key") }
        sync.rollout.deviceID = source.string("device-id")
        sync.report = source.bool("report") ?? true
        if let version = source.string("native-version") { sync.rollout.nativeVersion = try NativeVersion(version) }
        // Test hook for rollout decisions (docs/rollout.md); read from the environment only.
        if let offset = environment["CENARIUS_CLOCK_OFFSET"].flatMap(Double.init) { sync.rollout.clockOffset = offset }
        let developDir = FileSystem.absolute(source.string("develop-dir") ?? environment.home + "/Documents/www")
        return ResolvedSettings(sync: sync, develop: source.bool("develop") == true ? ServedFolder(root: developDir) : nil)
    }
}
