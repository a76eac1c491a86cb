import DeviceSettings
import ArgumentParser
import RouteSync
import Settings

/// `cenariusd config`: every setting in force, and whether a flag, the environment, the config
/// file or the default gave it — what a daemon started with the same flags and environment would
/// use, and the first thing to look at when one does not do what its configuration seems to say.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show every setting in force and where it comes from (flag, environment, config file or default).",
        discussion: """
            Reads flags, CENARIUS_* variables and the config file in that order of precedence, as every \
            command does, and prints each setting of cenarius-config(5) with its origin. Header values are \
            not shown.

            Example:
              cenariusd config --config /etc/cenarius/config.json
              CENARIUS_CONNECTIONS=4 cenariusd config --json
            """)

    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var serveSettings: ServeSettingsOptions
    @OptionGroup var global: GlobalOptions

    struct Entry: Encodable {
        var key: String
        var value: Shown?
        /// flag, environment, file, default, or none.
        var from: String
    }

    struct Report: Encodable {
        var configFile: String?
        var settings: [Entry]
    }

    func run() async throws {
        let flags = global.flagValues.merging(serveSettings.flagValues) { $1 }
        let source = try await global.source(commandFlags: serveSettings.flagValues)
        // Checked as the commands that use them check them (a bad URL, a malformed header).
        _ = try ResolvedSettings.make(source)
        let environment = ProcessEnvironment()
        let configFile = environment.configFile(flag: global.config)
        let fileKeys = try configFile.map { path throws(CenariusError) in Set(try ConfigFile.check(try FileSystem.readFile(path), path: path).keys) } ?? []
        let fromFlags = try Settings.decodeFlags(flags)
        let fromEnvironment = try Settings.decodeEnvironment(environment)
        let entries = Settings.all.map { setting in
            let from = fromFlags[setting.key] != nil ? "flag" : fromEnvironment[setting.key] != nil ? "environment"
                : fileKeys.contains(setting.key) ? "file" : setting.defaultText != nil ? "default" : "none"
            return Entry(key: setting.key, value: source.reading(setting).map { Shown($0, setting) }, from: from)
        }
        if json {
            Output.json(Report(configFile: configFile, settings: entries))
            return
        }
        if let configFile { Output.line("# config file: \(configFile)") }
        for entry in entries {
            let value = entry.value.map(\.text) ?? Settings.byKey[entry.key]?.defaultText.map { "(\($0))" } ?? "(none)"
            Output.line("\(entry.key) = \(value)   # \(entry.from)")
        }
    }

    /// A value as printed; a header's value is a credential as often as not: only its name is shown.
    struct Shown: Encodable {
        let value: SettingValue

        init(_ value: SettingValue, _ setting: Setting) {
            if setting.key == "header" || setting.key == "otlp-header", case .list(let items) = value {
                self.value = .list(items.map { String($0.prefix { $0 != ":" }) + ": (not shown)" })
            } else {
                self.value = value
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch value {
            case .string(let text): try container.encode(text)
            case .int(let number): try container.encode(number)
            case .double(let number): try container.encode(number)
            case .bool(let flag): try container.encode(flag)
            case .list(let items): try container.encode(items)
            }
        }

        var text: String {
            switch value {
            case .string(let text): JSONText.quoted(text)
            case .int(let number): String(number)
            case .double(let number): Whole.text(number)
            case .bool(let flag): flag ? "true" : "false"
            case .list(let items): "[" + items.map(JSONText.quoted).joined(separator: ", ") + "]"
            }
        }
    }
}
