import ArgumentParser
import RouteSync
import Settings

/// The bridge between the settings table and swift-argument-parser, whose options must be
/// declared as properties: each setting's option takes its help from the table, and the values
/// given are read back by key from the parsed command, so a setting's key, type, range, help and
/// default are written once, in the table. `SettingFlagsTests` checks that every setting has its
/// option and every option of a setting's name is read.
enum SettingFlags {
    /// The options of a parsed command (or option group) that are settings, as the raw strings
    /// the table decodes, by key: repeated values one per line, switches `true`/`false`.
    static func values(of command: Any) -> [String: String] {
        var values: [String: String] = [:]
        for child in Mirror(reflecting: command).children {
            // A property wrapper's storage is the property's name after an underscore.
            guard let label = child.label, label.hasPrefix("_") else { continue }
            let key = kebab(label.dropFirst())
            guard Settings.byKey[key] != nil, let raw = raw(child.value) else { continue }
            values[key] = raw
        }
        return values
    }

    /// `maxFileSize` → `max-file-size`.
    static func kebab(_ name: Substring) -> String {
        var key = ""
        for character in name {
            if character.isUppercase {
                key += "-" + character.lowercased()
            } else {
                key.append(character)
            }
        }
        return key
    }

    /// The value an option holds, as a string; nil when it was not given.
    private static func raw(_ value: Any) -> String? {
        switch value {
        case let option as Option<String?>: option.wrappedValue
        case let option as Option<Int?>: option.wrappedValue.map { String($0) }
        case let option as Option<Int64?>: option.wrappedValue.map { String($0) }
        case let option as Option<Double?>: option.wrappedValue.map { String($0) }
        case let option as Option<[String]>: option.wrappedValue.isEmpty ? nil : option.wrappedValue.joined(separator: "\n")
        case let flag as Flag<Bool?>: flag.wrappedValue.map { $0 ? "true" : "false" }
        default: nil
        }
    }

    /// A table-decoding failure of the given values as swift-argument-parser's validation error
    /// (exit 64 with the command's usage).
    static func validate(_ values: [String: String]) throws {
        do {
            _ = try Settings.decodeFlags(values)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

extension ArgumentHelp {
    /// A setting's help (with its default) and value name, from the settings table.
    static func setting(_ key: String) -> ArgumentHelp {
        guard let setting = Settings.byKey[key] else { return ArgumentHelp("") }
        return ArgumentHelp(setting.helpText, valueName: setting.valueName)
    }
}
