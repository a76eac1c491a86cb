package import ResourceCache
package import RouteSync
import Transport
package import Settings
package import Telemetry
#if canImport(Glibc)
import Glibc
#endif

/// Settings after precedence: what the commands use.
package struct ResolvedSettings: Sendable {
    package var sync: SyncSettings
    package var develop: ServedFolder?
    /// Where traces go; nil: nowhere (docs/telemetry.md).
    package var trace: TraceSettings?
    /// Where the daemon's metrics go over OTLP; nil: nowhere (`serve` alone sets it).
    package var metrics: MetricSettings?

    package func resolver() -> Resolver { Resolver(settings: sync, developFolder: develop) }

    /// The one mapping from setting keys to settings, whatever the source.
    package static func make(_ source: SettingSource) throws(CenariusError) -> ResolvedSettings {
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
        sync.channel = channel
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
        switch source.defaulted(source.string, "report-in") {
        case "header": sync.reportInQuery = false
        case "query": sync.reportInQuery = true
        case let other: throw .usage("--report-in must be header or query, not \(other)")
        }
        if let version = source.string("native-version") { sync.rollout.nativeVersion = try NativeVersion(version) }
        // Test hook for rollout decisions (docs/rollout.md); read from the environment only.
        if let offset = environment["CENARIUS_CLOCK_OFFSET"].flatMap(Double.init), abs(offset) <= Seconds.limit { sync.rollout.clockOffset = offset }
        // How long a writer waits for the cache's lock (default 120 s); from the environment only,
        // for scripts that would rather fail fast than queue behind a long sync (docs/why.md's `lock`).
        if let wait = environment["CENARIUS_LOCK_WAIT"].flatMap(Double.init).flatMap(Seconds.init(exactly:)) { sync.lockTimeout = wait.value }
        // Test hook for crash tests (docs/testing.md): SIGKILL just before a sync's effect of that name.
        if let name = environment["CENARIUS_TEST_KILL_BEFORE"], let target = SyncEffect(rawValue: name) {
            sync.effects = SyncEffects { effect in if effect == target { kill(getpid(), SIGKILL) } }
        }
        let developDir = FileSystem.absolute(source.string("develop-dir") ?? environment.home + "/Documents/www")
        return ResolvedSettings(sync: sync, develop: source.bool("develop") == true ? ServedFolder(root: developDir) : nil,
                                trace: try TraceSettings.make(source, environment: environment, sync: sync))
    }
}
