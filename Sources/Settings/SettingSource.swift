import Configuration
package import RouteSync
import SystemPackage

/// Every setting's value by key, typed, already in precedence order: what the commands read.
package struct SettingSource: Sendable {
    package var string: @Sendable (String) -> String?
    package var int: @Sendable (String) -> Int?
    package var double: @Sendable (String) -> Double?
    package var bool: @Sendable (String) -> Bool?
    /// A repeatable setting: repeated flags, a config-file array, or one value per line.
    package var strings: @Sendable (String) -> [String]?

    package init(string: @escaping @Sendable (String) -> String?, int: @escaping @Sendable (String) -> Int?,
                 double: @escaping @Sendable (String) -> Double?, bool: @escaping @Sendable (String) -> Bool?,
                 strings: @escaping @Sendable (String) -> [String]?) {
        self.string = string
        self.int = int
        self.double = double
        self.bool = bool
        self.strings = strings
    }

    /// Values decoded by the settings table (flags, environment).
    package static func decoded(_ values: [String: SettingValue]) -> SettingSource {
        SettingSource(
            string: { key in if case .string(let value) = values[key] { value } else { nil } },
            int: { key in if case .int(let value) = values[key] { value } else { nil } },
            double: { key in if case .double(let value) = values[key] { value } else { nil } },
            bool: { key in if case .bool(let value) = values[key] { value } else { nil } },
            strings: { key in if case .list(let value) = values[key] { value } else { nil } })
    }

    /// The sources in precedence order: the first that has a value wins.
    package static func first(_ sources: SettingSource...) -> SettingSource {
        SettingSource(
            string: { key in sources.lazy.compactMap { $0.string(key) }.first },
            int: { key in sources.lazy.compactMap { $0.int(key) }.first },
            double: { key in sources.lazy.compactMap { $0.double(key) }.first },
            bool: { key in sources.lazy.compactMap { $0.bool(key) }.first },
            strings: { key in sources.lazy.compactMap { $0.strings(key) }.first })
    }

    /// The fast command line's source: flags, then `CENARIUS_*`, then the table's defaults; no config file.
    package static func fast(flags: [String: String], environment: ProcessEnvironment) throws(CenariusError) -> SettingSource {
        .first(.decoded(try Settings.decodeFlags(flags)), .decoded(try Settings.decodeEnvironment(environment)), .decoded(Settings.defaults))
    }

    /// A setting's value as its kind reads it.
    package func reading(_ setting: Setting) -> SettingValue? {
        switch setting.kind {
        case .string: string(setting.key).map(SettingValue.string)
        case .int: int(setting.key).map(SettingValue.int)
        case .double: double(setting.key).map(SettingValue.double)
        case .bool: bool(setting.key).map(SettingValue.bool)
        case .list: strings(setting.key).map(SettingValue.list)
        }
    }

    /// The settings read once at start whose value differs in `other`.
    package func startOnlyChanges(in other: SettingSource) -> [String] {
        Settings.all.filter { !$0.reloads && reading($0) != other.reading($0) }.map(\.key)
    }

    /// A setting the table gives a default, which every reading ends with: never nil.
    package func defaulted<Value>(_ read: (String) -> Value?, _ key: String) -> Value {
        guard let value = read(key) else { preconditionFailure("the settings table gives '\(key)' no default of this type") }
        return value
    }

    /// The regular command line's source, through swift-configuration: the flags as its first
    /// provider, then `CENARIUS_*`, then the config file at `configFile` when given, then the
    /// table's defaults. Flags and environment are decoded by the settings table before they
    /// reach it, as on the fast path.
    package static func regular(flags: [String: String], environment: ProcessEnvironment,
                                configFile: String?) async throws(CenariusError) -> SettingSource {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: configValues(try Settings.decodeFlags(flags))),
            InMemoryProvider(name: "environment", values: configValues(try Settings.decodeEnvironment(environment))),
        ]
        if let path = configFile {
            let options = ConfigFileSnapshot.ParsingOptions(settings: Settings.byKey, path: path)
            do {
                providers.append(try await FileProvider<ConfigFileSnapshot>(parsingOptions: options, filePath: FilePath(path)))
            } catch let error as CenariusError where error.code == .usage {
                throw error
            } catch {
                throw .usage("bad config file \(path): \(error)")
            }
        }
        providers.append(InMemoryProvider(name: "defaults", values: configValues(Settings.defaults)))
        let reader = ConfigReader(providers: providers)
        // Each setting is read as the table's type only, as the decoded sources do: a string
        // setting is not also a list, nor an int setting a double.
        let kind: @Sendable (String) -> Setting.Kind? = { Settings.byKey[$0]?.kind }
        return SettingSource(
            string: { kind($0) == .string ? reader.string(forKey: ConfigKey($0)) : nil },
            int: { kind($0) == .int ? reader.int(forKey: ConfigKey($0)) : nil },
            double: { kind($0) == .double ? reader.double(forKey: ConfigKey($0)) : nil },
            bool: { kind($0) == .bool ? reader.bool(forKey: ConfigKey($0)) : nil },
            strings: { key in
                guard kind(key) == .list else { return nil }
                return reader.string(forKey: ConfigKey(key)).map(lines) ?? reader.stringArray(forKey: ConfigKey(key))
            })
    }

    private static func configValues(_ values: [String: SettingValue]) -> [AbsoluteConfigKey: ConfigValue] {
        var result: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in values {
            let content: ConfigContent = switch value {
            case .string(let text): .string(text)
            case .int(let number): .int(number)
            case .double(let number): .double(number)
            case .bool(let flag): .bool(flag)
            case .list(let items): .stringArray(items)
            }
            result[AbsoluteConfigKey(ConfigKey(key))] = ConfigValue(content, isSecret: false)
        }
        return result
    }

    package static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }
}
