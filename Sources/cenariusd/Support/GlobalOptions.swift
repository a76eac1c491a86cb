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
    // Each option's help, value name, range and default are the settings table's (Setting.swift);
    // its values reach the table by the property's name (SettingFlags).
    @Option(help: .setting("remote")) var remote: [String] = []
    @Option(help: .setting("preset")) var preset: String?
    @Option(help: .setting("cache")) var cache: String?
    @Flag(inversion: .prefixedNo, help: .setting("develop")) var develop: Bool?
    @Option(help: .setting("develop-dir")) var developDir: String?
    @Flag(inversion: .prefixedNo, help: .setting("report")) var report: Bool?
    @Option(help: ArgumentHelp("JSON config file (default $XDG_CONFIG_HOME/cenarius/config.json if present).", valueName: "file"))
    var config: String?
    @Option(help: .setting("public-key")) var publicKey: [String] = []
    @Option(help: .setting("signatures-required")) var signaturesRequired: Int?
    @Option(help: .setting("connections")) var connections: Int?
    @Option(help: .setting("timeout")) var timeout: Int?
    @Option(help: .setting("routes-name")) var routesName: String?
    @Option(help: .setting("channel")) var channel: String?
    @Option(help: .setting("max-file-size")) var maxFileSize: Int64?
    @Option(help: .setting("min-refetch")) var minRefetch: Double?
    @Option(help: .setting("user-agent")) var userAgent: String?
    @Option(help: .setting("keep")) var keep: Int?
    @Option(help: .setting("grace")) var grace: Double?
    @Option(help: .setting("device-id")) var deviceId: String?
    @Option(help: .setting("native-version")) var nativeVersion: String?
    @Option(help: .setting("cacert")) var cacert: String?
    @Option(help: .setting("client-cert")) var clientCert: String?
    @Option(help: .setting("client-key")) var clientKey: String?
    @Option(help: .setting("header")) var header: [String] = []
    @Option(help: .setting("max-rate")) var maxRate: Int64?

    /// Ranges and types, as the table says them, before anything runs.
    func validate() throws { try SettingFlags.validate(flagValues) }

    /// The flags given, as raw strings by setting key (the keys of the config file).
    var flagValues: [String: String] { SettingFlags.values(of: self) }

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
        let routesName = source.defaulted(source.string, "routes-name")
        guard !routesName.isEmpty, !routesName.contains("/") else { throw .usage("--routes-name must be a plain file name") }
        // URLs hold no whitespace (Remote refuses it), so a list may also come as one spaced string.
        let channel = source.defaulted(source.string, "channel")
        try ReleaseHead.checkChannel(channel)
        let remotes = try (source.strings("remote") ?? []).flatMap { $0.split(whereSeparator: \.isWhitespace) }
            .map { url throws(CenariusError) in try Remote(String(url), routesName: routesName, channel: channel) }
        // Absolute, so that every path handed out works from any working directory.
        let cacheRoot = FileSystem.absolute(source.string("cache") ?? environment.cacheHome + "/cenarius")
        let presetRoot = FileSystem.absolute(source.defaulted(source.string, "preset"))
        var sync = SyncSettings(remote: remotes.first, cache: CacheLayout(root: cacheRoot), preset: Preset(root: presetRoot, routesName: routesName))
        if let n = source.int("connections") { sync.transfer.connections = n }
        if let t = source.int("timeout") { sync.transfer.timeout = t }
        if let size = source.int("max-file-size") { sync.transfer.maxFileSize = Int64(size) }
        if let agent = source.string("user-agent") { sync.transfer.userAgent = agent }
        if let seconds = source.double("min-refetch") { sync.minRefetch = seconds }
        if let n = source.int("keep") { sync.keepGenerations = n }
        if let seconds = source.double("grace") { sync.grace = seconds }
        sync.mirrors = Array(remotes.dropFirst())
        try applyTransport(source, to: &sync)
        let keyPaths = source.strings("public-key") ?? []
        let required = source.defaulted(source.int, "signatures-required")
        if !keyPaths.isEmpty { sync.tableVerifier = try TableSignatureVerifier(publicKeyFiles: keyPaths, required: required) }
        else if required > 1 { throw .usage("--signatures-required \(required) needs --public-key") }
        sync.rollout.deviceID = source.string("device-id")
        sync.report = source.defaulted(source.bool, "report")
        if let version = source.string("native-version") { sync.rollout.nativeVersion = try NativeVersion(version) }
        // Test hook for rollout decisions (docs/rollout.md); read from the environment only.
        if let offset = environment["CENARIUS_CLOCK_OFFSET"].flatMap(Double.init), abs(offset) <= Seconds.limit { sync.rollout.clockOffset = offset }
        // How long a writer waits for the cache's lock (default 120 s); from the environment only,
        // for scripts that would rather fail fast than queue behind a long sync (docs/why.md's `lock`).
        if let wait = environment["CENARIUS_LOCK_WAIT"].flatMap(Double.init).flatMap(Seconds.init(exactly:)) { sync.lockTimeout = wait.value }
        let developDir = FileSystem.absolute(source.string("develop-dir") ?? environment.home + "/Documents/www")
        return ResolvedSettings(sync: sync, develop: source.bool("develop") == true ? ServedFolder(root: developDir) : nil)
    }
}
