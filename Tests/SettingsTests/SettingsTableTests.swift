import Foundation
import Daemon
import ResourceCache
import RouteSync
import Transport
import Settings
import Testing

/// Every setting read through the fast command line and through swift-configuration means the
/// same: one table decodes both (issue: `CENARIUS_DEVELOP=on` was true on one path only).
@Suite struct SettingsTableTests {
    /// A value of each kind, spelled the way a user would write it.
    static func sample(_ setting: Setting) -> String {
        switch setting.kind {
        case .string: "/some/where/\(setting.key)"
        case .int: "42"
        case .double: "2.5"
        case .bool: "on"
        case .list: "first\nsecond"
        }
    }

    static func readings(_ source: SettingSource, _ key: String) -> [String] {
        [String(describing: source.string(key)), String(describing: source.int(key)), String(describing: source.double(key)),
         String(describing: source.bool(key)), String(describing: source.strings(key))]
    }

    static let noConfig = ["HOME": "/nonexistent-home", "XDG_CONFIG_HOME": "/nonexistent-config"]

    @Test(arguments: Settings.all)
    func bothPathsReadEverySettingAlike(_ setting: Setting) async throws {
        let raw = Self.sample(setting)
        for channel in ["flag", "environment"] {
            let flags = channel == "flag" ? [setting.key: raw] : [:]
            let environment = ProcessEnvironment(variables: Self.noConfig.merging(channel == "environment" ? [setting.environmentName: raw] : [:]) { $1 })
            let fast = try SettingSource.fast(flags: flags, environment: environment)
            let regular = try await SettingSource.regular(flags: flags, environment: environment, configFile: nil)
            #expect(Self.readings(fast, setting.key) == Self.readings(regular, setting.key), "\(setting.key) by \(channel)")
            let expected: String = switch setting.kind {
            case .string: String(describing: Optional(raw))
            case .int: String(describing: Optional(42))
            case .double: String(describing: Optional(2.5))
            case .bool: String(describing: Optional(true))
            case .list: String(describing: Optional(["first", "second"]))
            }
            #expect(Self.readings(fast, setting.key).contains(expected), "\(setting.key) by \(channel)")
        }
    }

    @Test(arguments: [("on", true), ("yes", true), ("1", true), ("TRUE", true), (" off ", false), ("no", false), ("0", false), ("false", false)])
    func switchesAreSpelledEveryUsualWay(_ raw: String, _ value: Bool) async throws {
        let environment = ProcessEnvironment(variables: Self.noConfig.merging(["CENARIUS_DEVELOP": raw]) { $1 })
        #expect(try SettingSource.fast(flags: [:], environment: environment).bool("develop") == value)
        #expect(try await SettingSource.regular(flags: [:], environment: environment, configFile: nil).bool("develop") == value)
    }

    @Test(arguments: [("CENARIUS_DEVELOP", "maybe"), ("CENARIUS_CONNECTIONS", "many"), ("CENARIUS_GRACE", "soon"), ("CENARIUS_MAX_RATE", "1.5")])
    func aValueThatDoesNotDecodeIsAUsageErrorNamingItsVariable(_ name: String, _ raw: String) async throws {
        let environment = ProcessEnvironment(variables: Self.noConfig.merging([name: raw]) { $1 })
        for error in [Self.error { try SettingSource.fast(flags: [:], environment: environment) },
                      await Self.error { try await SettingSource.regular(flags: [:], environment: environment, configFile: nil) }] {
            #expect(error?.code == .usage)
            #expect(error?.message.contains(name) == true)
        }
    }

    @Test func flagsBeatTheEnvironmentWhichBeatsTheConfigFile() async throws {
        let file = NSTemporaryDirectory() + "cenarius-settings-\(UUID().uuidString).json"
        try Data(#"{"connections": 3, "keep": 5, "grace": 7.5, "remote": ["http://a/", "http://b/"]}"#.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let environment = ProcessEnvironment(variables: Self.noConfig.merging(["CENARIUS_CONNECTIONS": "4", "CENARIUS_KEEP": "6"]) { $1 })
        let source = try await SettingSource.regular(flags: ["connections": "8"], environment: environment, configFile: file)
        #expect(source.int("connections") == 8)
        #expect(source.int("keep") == 6)
        #expect(source.double("grace") == 7.5)
        #expect(source.strings("remote") == ["http://a/", "http://b/"])
        let fast = try SettingSource.fast(flags: ["connections": "8"], environment: environment)
        #expect(fast.int("connections") == 8)
        #expect(fast.int("keep") == 6)
    }

    /// Several trusted keys (G8): repeated flags, one path per line in the environment, a string or
    /// an array in the config file; every path stays whole (paths may hold spaces).
    @Test func publicKeysAreAListFromEverySource() async throws {
        let file = NSTemporaryDirectory() + "cenarius-settings-\(UUID().uuidString).json"
        try Data(#"{"public-key": ["/k/a b.pub", "/k/c.pub"], "signatures-required": 2}"#.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let none = ProcessEnvironment(variables: Self.noConfig)
        let fromFile = try await SettingSource.regular(flags: [:], environment: none, configFile: file)
        #expect(fromFile.strings("public-key") == ["/k/a b.pub", "/k/c.pub"])
        #expect(fromFile.int("signatures-required") == 2)
        let single = try await SettingSource.regular(flags: [:], environment: ProcessEnvironment(variables: Self.noConfig.merging(["CENARIUS_PUBLIC_KEY": "/k/one.pub"]) { $1 }), configFile: nil)
        #expect(single.strings("public-key") == ["/k/one.pub"])
        let lines = ProcessEnvironment(variables: Self.noConfig.merging(["CENARIUS_PUBLIC_KEY": "/k/a.pub\n/k/b.pub"]) { $1 })
        #expect(try SettingSource.fast(flags: [:], environment: lines).strings("public-key") == ["/k/a.pub", "/k/b.pub"])
        #expect(try SettingSource.fast(flags: ["public-key": "/k/x.pub\n/k/y.pub"], environment: lines).strings("public-key") == ["/k/x.pub", "/k/y.pub"])
    }

    @Test func theEnvironmentNamesFollowTheKeys() {
        #expect(Settings.byKey["develop-dir"]?.environmentName == "CENARIUS_DEVELOP_DIR")
        #expect(Settings.byKey["max-file-size"]?.flag == "--max-file-size")
        #expect(Settings.keys.count == Settings.all.count)
    }

    static func error(_ body: () throws -> Any) -> CenariusError? {
        do { _ = try body(); return nil } catch let error as CenariusError { return error } catch { return nil }
    }

    static func error(_ body: () async throws -> Any) async -> CenariusError? {
        do { _ = try await body(); return nil } catch let error as CenariusError { return error } catch { return nil }
    }
}

@Suite struct ConfigFileTests {
    func load(_ json: String) async -> CenariusError? {
        let file = NSTemporaryDirectory() + "cenarius-config-\(UUID().uuidString).json"
        try? Data(json.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return await SettingsTableTests.error {
            try await SettingSource.regular(flags: [:], environment: ProcessEnvironment(variables: SettingsTableTests.noConfig), configFile: file)
        }
    }

    @Test func unknownKeysAndWrongTypesAreRefusedNamingTheKey() async {
        let unknown = await load(#"{"caFile": "/ca.pem"}"#)
        #expect(unknown?.code == .usage)
        #expect(unknown?.message.contains("\"caFile\"") == true)
        let wrongType = await load(#"{"max-rate": "fast"}"#)
        #expect(wrongType?.code == .usage)
        #expect(wrongType?.message.contains("\"max-rate\"") == true)
        #expect(await load(#"{"develop": "yes"}"#)?.code == .usage)
        #expect(await load(#"{"remote": "http://a/", "header": ["A: b"], "develop": true, "grace": 3, "keep": 2}"#) == nil)
    }

    /// Issue 28: a number out of its setting's range is a usage error naming the key, whether
    /// it comes from the config file, the environment or a flag; never a trap further in.
    @Test func numbersOutOfRangeAreUsageErrorsNamingTheSetting() async throws {
        for text in [#"{"timeout": 1e300}"#, #"{"timeout": 99999999999999999999}"#, #"{"grace": 1e400}"#, #"{"grace": -1}"#,
                     #"{"connections": 0}"#, #"{"max-file-size": 9223372036854775807}"#, #"{"confirm-timeout": 1e308}"#,
                     #"{"start-jitter": -0.5}"#, #"{"min-refetch": 1e20}"#] {
            let error = await load(text)
            #expect(error?.code == .usage, "\(text)")
            let key = text.split(separator: "\"")[1]
            #expect(error?.message.contains("\"\(key)\"") == true, "\(text): \(error?.message ?? "accepted")")
        }
        #expect(await load(#"{"timeout": 86400, "grace": 0, "max-rate": 0, "confirm-timeout": 0.5, "max-file-size": 1000}"#) == nil)
        for (name, raw) in [("CENARIUS_TIMEOUT", "99999999"), ("CENARIUS_GRACE", "1e300"), ("CENARIUS_CONNECTIONS", "257"), ("CENARIUS_KEEP", "-1")] {
            let environment = ProcessEnvironment(variables: SettingsTableTests.noConfig.merging([name: raw]) { $1 })
            let error = SettingsTableTests.error { try SettingSource.fast(flags: [:], environment: environment) }
            #expect(error?.code == .usage, "\(name)=\(raw)")
            #expect(error?.message.contains(name) == true && error?.message.contains("out of range") == true, "\(error?.message ?? "accepted")")
        }
        let flag = SettingsTableTests.error { try SettingSource.fast(flags: ["timeout": "100000"], environment: ProcessEnvironment(variables: SettingsTableTests.noConfig)) }
        #expect(flag?.message.contains("--timeout") == true)
    }
}

/// The configuration page names every setting with its variable and the table's default.
@Suite struct ConfigurationDocumentTests {
    @Test func everySettingHasItsRowWithTheTablesDefault() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| ") }
        for setting in Settings.all {
            let row = rows.first { $0.contains("`\(setting.environmentName)`") }
            #expect(row != nil, "docs/configuration.md has no row for \(setting.key)")
            if let row, let defaultText = setting.defaultText {
                #expect(row.contains(defaultText), "the row of \(setting.key) says its default is \(defaultText)")
            }
        }
    }
}

/// The command line's defaults are the table's; the library types that a test or another
/// program builds without the command line start from the same values.
@Suite struct SettingDefaultsTests {
    @Test func theLibraryStartsFromTheTablesDefaults() {
        let transfer = TransferOptions()
        let sync = SyncSettings(remote: nil, cache: CacheLayout(root: "/c"), preset: Preset(root: "/p"))
        let expected: [String: SettingValue] = [
            "connections": .int(transfer.connections), "timeout": .int(transfer.timeout), "max-file-size": .int(Int(transfer.maxFileSize)),
            "max-rate": .int(Int(transfer.maxRate)), "keep": .int(sync.keepGenerations), "grace": .double(sync.grace),
            "min-refetch": .double(sync.minRefetch), "report": .bool(sync.report), "hook-timeout": .double(TrialOptions().hookTimeout),
            "routes-name": .string(Preset(root: "/p").routesName),
            "port": .int(DaemonOptions().port), "bind": .string(DaemonOptions().bind), "interval": .double(DaemonOptions().interval),
            "fail-when-expired": .bool(DaemonOptions().failWhenExpired),
            "peer-max-connections": .int(PeerServeOptions(host: "127.0.0.1", port: 1).maxConnections),
            "peer-max-rate": .int(PeerServeOptions(host: "127.0.0.1", port: 1).maxRate),
        ]
        for (key, value) in expected {
            #expect(Settings.byKey[key]?.defaultValue == value, "\(key)")
        }
    }
}
