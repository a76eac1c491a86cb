import DeviceSettings
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
    @Option(help: .setting("report-in")) var reportIn: String?
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
    @Option(help: .setting("otlp-endpoint")) var otlpEndpoint: String?
    @Option(help: .setting("otlp-header")) var otlpHeader: [String] = []
    @Option(help: .setting("trace-sampler")) var traceSampler: String?
    @Option(help: .setting("peer")) var peer: [String] = []

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
