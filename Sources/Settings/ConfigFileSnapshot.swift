import Configuration
package import RouteSync

/// The config file as swift-configuration sees it, parsed by the project's own JSON scanner.
/// swift-configuration's `JSONSnapshot` needs Foundation's `JSONSerialization`, and with it
/// Foundation and ICU (about 40 MB) in a binary that otherwise needs only FoundationEssentials;
/// so the package is built without its JSON trait.
///
/// The file is one flat object: strings, numbers, booleans and arrays of strings (`remote`,
/// `header`). A key the program does not know is refused, naming it, since it would otherwise be
/// a setting ignored in silence (a typo, another tool's name for a setting).
struct ConfigFileSnapshot: FileConfigSnapshot {
    struct ParsingOptions: FileParsingOptions {
        /// Every key a config file may hold, with its type; nil accepts any key of any type.
        var settings: [String: Setting]?
        /// The file's path, for messages.
        var path = "config file"

        static var `default`: ParsingOptions { ParsingOptions() }
    }

    let providerName: String
    private let members: [String: JSONValue]

    init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        members = try Self.members(data.withUnsafeBytes { Array($0) }, parsingOptions)
        self.providerName = providerName
    }

    /// The file's keys and values, each checked against the settings table (its type and range).
    static func members(_ bytes: [UInt8], _ parsingOptions: ParsingOptions) throws(CenariusError) -> [String: JSONValue] {
        let path = parsingOptions.path
        let json: JSONValue
        do { json = try JSONValue.parse(bytes, source: path) } catch { throw .usage("bad config file \(path): \(error.message)") }
        guard case .object(let members) = json else {
            throw CenariusError.usage("config file \(path) must hold one JSON object")
        }
        if let settings = parsingOptions.settings {
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                guard let setting = settings[key] else {
                    throw CenariusError.usage("unknown key \(JSONText.quoted(key)) in config file \(path); known keys: \(settings.keys.sorted().joined(separator: ", "))")
                }
                // Checked here rather than when read: a value of the wrong type would otherwise
                // be skipped in silence by the reader, like an unknown key.
                guard value == .null || Self.fits(value, setting.kind) else {
                    throw CenariusError.usage("config key \(JSONText.quoted(key)) in \(path) must be \(setting.kind.spoken)")
                }
                if case .number(let text) = value {
                    guard let number = Double(text), number.isFinite else {
                        throw CenariusError.usage("config key \(JSONText.quoted(key)) in \(path): \(text.prefix(40)) is not a finite number")
                    }
                    try setting.check(number, origin: "config key \(JSONText.quoted(key)) in \(path):")
                }
            }
        }
        return members
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = key.components.joined(separator: ".")
        guard let value = members[name], value != .null else { return LookupResult(encodedKey: name, value: nil) }
        guard let content = Self.content(value, as: type) else {
            throw CenariusError.usage("config key \(JSONText.quoted(name)) must be \(Self.describe(type))")
        }
        return LookupResult(encodedKey: name, value: ConfigValue(content, isSecret: false))
    }

    /// The value as the type asked for; numbers and booleans convert as they do in
    /// swift-configuration's own JSON snapshot (true is 1, an integral double is an int).
    private static func content(_ value: JSONValue, as type: ConfigType) -> ConfigContent? {
        switch (type, value) {
        case (.string, .string(let text)): return .string(text)
        case (.int, .number(let text)): return (Int(text) ?? Double(text).flatMap { Int(exactly: $0) }).map { .int($0) }
        case (.int, .bool(let flag)): return .int(flag ? 1 : 0)
        case (.double, .number(let text)): return Double(text).map { .double($0) }
        case (.double, .bool(let flag)): return .double(flag ? 1 : 0)
        case (.bool, .bool(let flag)): return .bool(flag)
        case (.bool, .number(let text)): return Double(text).map { .bool($0 != 0) }
        case (.stringArray, .array(let items)):
            let strings = items.compactMap(\.string)
            return strings.count == items.count ? .stringArray(strings) : nil
        default: return nil
        }
    }

    private static func fits(_ value: JSONValue, _ kind: Setting.Kind) -> Bool {
        switch (kind, value) {
        case (.string, .string), (.bool, .bool), (.double, .number): true
        case (.int, .number(let text)): Int(text) != nil
        case (.list, .string): true
        case (.list, .array(let items)): items.allSatisfy { $0.string != nil }
        default: false
        }
    }


    private static func describe(_ type: ConfigType) -> String {
        switch type {
        case .string: "a string"
        case .int: "an integer"
        case .double: "a number"
        case .bool: "true or false"
        case .stringArray: "an array of strings"
        default: "a \(type.rawValue)"
        }
    }

    var description: String { "\(providerName)[\(members.count) values]" }
    var debugDescription: String { description }
}

/// A config file's bytes checked as `--config` checks them, without swift-configuration's file
/// provider around it (for the fuzzer and tests).
package enum ConfigFile {
    package static func check(_ bytes: [UInt8], path: String) throws(CenariusError) -> [String: JSONValue] {
        try ConfigFileSnapshot.members(bytes, .init(settings: Settings.byKey, path: path))
    }
}
