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
    /// For `.int` and `.double`: the values that make sense. A number from outside past them
    /// (`"timeout": 1e300`) is a usage error naming the setting, never a trap further in.
    package let range: ClosedRange<Double>?

    package init(_ key: String, _ kind: Kind, _ range: ClosedRange<Double>? = nil) {
        self.key = key
        self.kind = kind
        self.range = range
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
        Setting("develop-dir", .string), Setting("public-key", .list), Setting("signatures-required", .int, 1...64),
        Setting("connections", .int, 1...256), Setting("timeout", .int, 1...86_400), Setting("routes-name", .string),
        Setting("max-file-size", .int, 1...Double(ByteCount.limit)), Setting("min-refetch", .double, 0...Setting.year),
        Setting("user-agent", .string), Setting("keep", .int, 1...10_000), Setting("grace", .double, 0...Setting.year),
        Setting("device-id", .string), Setting("native-version", .string), Setting("cacert", .string),
        Setting("client-cert", .string), Setting("client-key", .string), Setting("header", .list),
        Setting("max-rate", .int, 0...Double(ByteCount.limit)), Setting("report", .bool),
    ]
    /// `serve`'s own.
    package static let serve: [Setting] = [
        Setting("confirm-timeout", .double, 0.001...Setting.year), Setting("health-cmd", .string), Setting("health-url", .string),
        Setting("on-switch", .string), Setting("hook-timeout", .double, 0.001...Setting.year), Setting("start-jitter", .double, 0...Setting.year),
        Setting("report-url", .string),
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
