package import RouteSync

/// One setting, once: the key a config file uses, which is also the flag's name (`--key`) and,
/// upper-cased with underscores, the environment variable (`CENARIUS_KEY`); its type; and the
/// one way a string from a flag or the environment decodes to it. The fast command line
/// (`FastPath`) and the regular one (swift-configuration) both decode through it, so a value
/// means the same whichever path reads it. Defaults are applied after precedence, in one place
/// (`ResolvedSettings.make`, `ServeCommand`).
package struct Setting: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        case string, int, double, bool
        /// Repeatable: flags given more than once, a config-file array, or one value per line.
        case list
    }

    package let key: String
    package let kind: Kind

    package init(_ key: String, _ kind: Kind) {
        self.key = key
        self.kind = kind
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
            return .int(value)
        case .double:
            guard let value = Double(raw.trimmingSpaces), value.isFinite else { throw .usage("\(origin) \(JSONText.quoted(raw)) is not a number") }
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

/// A setting's value in its type.
package enum SettingValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case list([String])
}

/// Every setting the command line, the environment and the config file know.
package enum Settings {
    /// Shared by every command.
    package static let shared: [Setting] = [
        Setting("remote", .list), Setting("preset", .string), Setting("cache", .string), Setting("develop", .bool),
        Setting("develop-dir", .string), Setting("public-key", .list), Setting("signatures-required", .int), Setting("connections", .int),
        Setting("timeout", .int), Setting("routes-name", .string), Setting("max-file-size", .int),
        Setting("min-refetch", .double), Setting("user-agent", .string), Setting("keep", .int), Setting("grace", .double),
        Setting("device-id", .string), Setting("native-version", .string), Setting("cacert", .string),
        Setting("client-cert", .string), Setting("client-key", .string), Setting("header", .list), Setting("max-rate", .int),
        Setting("report", .bool),
    ]
    /// `serve`'s own.
    package static let serve: [Setting] = [
        Setting("confirm-timeout", .double), Setting("health-cmd", .string), Setting("health-url", .string),
        Setting("on-switch", .string), Setting("start-jitter", .double), Setting("report-url", .string),
    ]
    package static let all = shared + serve
    package static let byKey = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
    /// Every key a config file may hold.
    package static let keys = Set(all.map(\.key))

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

extension String {
    var trimmingSpaces: Substring {
        var text = self[...]
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
