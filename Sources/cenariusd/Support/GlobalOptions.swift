import ArgumentParser
import Configuration
import ResourceCache
import RouteSync
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The options every command shares. Each is optional here so that precedence can be
/// applied afterwards: flag > `CENARIUS_*` environment > config file > default.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Remote folder URL holding the route table (http, https or file).", valueName: "url"))
    var remote: String?

    @Option(help: ArgumentHelp("Preset folder shipped with the app (default ./www).", valueName: "dir"))
    var preset: String?

    @Option(help: ArgumentHelp("Cache folder (default $XDG_CACHE_HOME/cenarius).", valueName: "dir"))
    var cache: String?

    @Flag(inversion: .prefixedNo, help: "Develop mode: serve the develop folder as it is, no table, no network.")
    var develop: Bool?

    @Option(help: ArgumentHelp("Develop folder (default $HOME/Documents/www).", valueName: "dir"))
    var developDir: String?

    @Option(help: ArgumentHelp("JSON config file (default $XDG_CONFIG_HOME/cenarius/config.json if present).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Ed25519 public key file; tables must then be signed.", valueName: "file"))
    var publicKey: String?

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

    func validate() throws {
        if let connections, !(1...256).contains(connections) { throw ValidationError("--connections must be 1...256") }
        if let timeout, timeout < 1 { throw ValidationError("--timeout must be at least 1 second") }
        if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
        if let maxFileSize, maxFileSize < 1 { throw ValidationError("--max-file-size must be positive") }
    }

    /// Applies the precedence chain and returns the settings every command works with.
    func resolved() async throws(CenariusError) -> ResolvedSettings {
        let reader = try await configReader()
        func string(_ key: String, _ flag: String?) -> String? { flag ?? reader.string(forKey: ConfigKey(key)) }
        func int(_ key: String, _ flag: Int?) -> Int? { flag ?? reader.int(forKey: ConfigKey(key)) }
        func double(_ key: String, _ flag: Double?) -> Double? { flag ?? reader.double(forKey: ConfigKey(key)) }
        func bool(_ key: String, _ flag: Bool?) -> Bool? { flag ?? reader.bool(forKey: ConfigKey(key)) }

        let environment = ProcessEnvironment()
        let routesName = string("routes-name", routesName) ?? "Routes.json"
        guard !routesName.isEmpty, !routesName.contains("/") else { throw .usage("--routes-name must be a plain file name") }
        let remoteURL = string("remote", remote)
        let remote: Remote?
        do { remote = try remoteURL.map { url throws(CenariusError) in try Remote(url, routesName: routesName) } }
        // Absolute, so that every path handed out works from any working directory.
        let cacheRoot = FileSystem.absolute(string("cache", cache) ?? environment.cacheHome + "/cenarius")
        let presetRoot = FileSystem.absolute(string("preset", preset) ?? "./www")
        var sync = SyncSettings(remote: remote, cache: CacheLayout(root: cacheRoot), preset: Preset(root: presetRoot, routesName: routesName))
        if let n = int("connections", connections) { sync.transfer.connections = n }
        if let t = int("timeout", timeout) { sync.transfer.timeout = t }
        if let size = int("max-file-size", maxFileSize.map(Int.init)) { sync.transfer.maxFileSize = Int64(size) }
        if let agent = string("user-agent", userAgent) { sync.transfer.userAgent = agent }
        if let seconds = double("min-refetch", minRefetch) { sync.minRefetch = seconds }
        if let n = int("keep", keep) { sync.keepGenerations = max(1, n) }
        if let seconds = double("grace", grace) { sync.grace = seconds }
        if let keyPath = string("public-key", publicKey) { sync.tableVerifier = try TableSignatureVerifier(publicKeyFile: keyPath) }
        let developDir = FileSystem.absolute(string("develop-dir", developDir) ?? environment.home + "/Documents/www")
        return ResolvedSettings(
            sync: sync,
            develop: bool("develop", develop) == true ? ServedFolder(root: developDir) : nil,
            publicKeyPath: string("public-key", publicKey))
    }

    private func configReader() async throws(CenariusError) -> ConfigReader {
        let environment = ProcessEnvironment()
        let explicit = config ?? environment["CENARIUS_CONFIG"]
        let path = explicit ?? environment.configHome + "/cenarius/config.json"
        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider().prefixKeys(with: ["cenarius"])]
        if explicit != nil || FileSystem.exists(path) {
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
            } catch {
                throw .usage("bad config file \(path): \(error)")
            }
        }
        return ConfigReader(providers: providers)
    }
}

/// Settings after precedence: what the commands use.
struct ResolvedSettings: Sendable {
    var sync: SyncSettings
    var develop: ServedFolder?
    var publicKeyPath: String?

    func resolver() -> Resolver { Resolver(settings: sync, developFolder: develop) }
}

/// The process environment, read without Foundation.
struct ProcessEnvironment {
    subscript(name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    var home: String { self["HOME"] ?? "/tmp" }
    var cacheHome: String { self["XDG_CACHE_HOME"] ?? home + "/.cache" }
    var configHome: String { self["XDG_CONFIG_HOME"] ?? home + "/.config" }
}
