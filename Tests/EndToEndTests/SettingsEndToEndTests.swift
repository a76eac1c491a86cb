import Foundation
import Settings
import Testing

/// One declaration per setting: every setting of the table reaches the program by its flag, its
/// `CENARIUS_*` variable and its config-file key, as `cenariusd config` reports it with its
/// origin. An option whose value the table never sees (a property of a type the bridge does not
/// read, a name that differs from the key) fails here, as does a setting without its option.
@Suite struct SettingsEndToEndTests {
    /// A value of each setting that every command accepts (key files are real keys, file
    /// settings name a readable file), different from its default.
    static func samples(_ dir: Scratch) throws -> [String: SettingValue] {
        try dir.keygen("one")
        try dir.keygen("two")
        try dir.write("file.pem", "not read here")
        var samples: [String: SettingValue] = [:]
        for setting in Settings.all {
            samples[setting.key] = switch (setting.key, setting.kind) {
            case ("remote", _): .list(["http://127.0.0.1:9/one", "http://127.0.0.1:9/two"])
            case ("public-key", _): .list([dir.path("one.pub"), dir.path("two.pub")])
            case ("header", _), ("otlp-header", _): .list(["X-One: 1", "X-Two: 2"])
            case ("otlp-endpoint", _): .string("http://127.0.0.1:9/v1/traces")
            case ("otlp-metrics-endpoint", _): .string("http://127.0.0.1:9/v1/metrics")
            case ("trace-sampler", _): .string("parentbased_traceidratio:0.25")
            case ("cacert", _), ("client-cert", _), ("client-key", _): .string(dir.path("file.pem"))
            case ("native-version", _): .string("2.3.0")
            case ("routes-name", _): .string("Table.json")
            case ("channel", _): .string("beta")
            case ("report-in", _): .string("query")
            case ("peer", _): .list(["http://127.0.0.1:9", "http://[::1]:9"])
            case ("peer-listen", _): .string("127.0.0.1:9")
            case ("peer-allow", _): .list(["10.0.0.0/8", "fd00::/8"])
            case ("peer-discovery", _): .string("off")
            case (_, .string): .string("/some/where/" + setting.key)
            case (_, .int): .int(Int(setting.range?.lowerBound ?? 0) + 1)
            case (_, .double): .double((setting.range?.lowerBound ?? 0) + 1.5)
            case (_, .bool): .bool(setting.defaultValue != .bool(true))
            case (_, .list): .list(["first", "second"])
            }
        }
        return samples
    }

    static func flags(_ key: String, _ value: SettingValue) -> [String] {
        switch value {
        case .bool(let flag): [flag ? "--" + key : "--no-" + key]
        case .list(let items): items.flatMap { ["--" + key, $0] }
        default: ["--" + key, value.raw]
        }
    }

    static func json(_ value: SettingValue) -> Any {
        switch value {
        case .string(let text): text
        case .int(let number): number
        case .double(let number): number
        case .bool(let flag): flag
        case .list(let items): items
        }
    }

    /// What `config --json` reports of each setting: its value as JSON text, and its origin.
    static func reported(_ run: Binary.Run) throws -> [String: (value: String, from: String)] {
        let settings = try #require(try run.json()["settings"] as? [[String: Any]], "\(run.stdout)\(run.stderr)")
        var reported: [String: (value: String, from: String)] = [:]
        for entry in settings {
            guard let key = entry["key"] as? String else { continue }
            reported[key] = (entry["value"].map { "\($0)" } ?? "nil", entry["from"] as? String ?? "")
        }
        return reported
    }

    @Test func everySettingReachesTheProgramByFlagVariableAndFile() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let samples = try Self.samples(dir)
        let fileObject = samples.mapValues(Self.json)
        try dir.write("config.json", String(decoding: try JSONSerialization.data(withJSONObject: fileObject), as: UTF8.self))
        let runs: [(String, Binary.Run)] = [
            ("flag", try Binary.run(["config", "--json"] + samples.sorted { $0.key < $1.key }.flatMap { Self.flags($0.key, $0.value) })),
            ("environment", try Binary.run(["config", "--json"], environment: Dictionary(uniqueKeysWithValues: Settings.all.map {
                ($0.environmentName, samples[$0.key]!.raw)
            }))),
            ("file", try Binary.run(["config", "--json", "--config", dir.path("config.json")])),
        ]
        for (origin, run) in runs {
            #expect(run.status == 0, "\(origin): \(run.stderr)")
            let reported = try Self.reported(run)
            #expect(Set(reported.keys) == Settings.keys, "\(origin)")
            for setting in Settings.all {
                // JSONSerialization reads a JSON boolean as a number.
                let expected = setting.kind == .bool ? (samples[setting.key] == .bool(true) ? "1" : "0") : "\(Self.json(samples[setting.key]!))"
                var shown = reported[setting.key]?.value ?? "missing"
                // Header values are not shown, their names are.
                if setting.key == "header" || setting.key == "otlp-header" { shown = expected.contains("X-One") && shown.contains("X-One") && shown.contains("X-Two") ? expected : shown }
                #expect(shown == expected, "\(setting.key) by \(origin)")
                #expect(reported[setting.key]?.from == origin, "\(setting.key) by \(origin)")
            }
        }
        // Nothing given: each setting with a default reports it as such.
        let bare = try Self.reported(try Binary.run(["config", "--json"]))
        for setting in Settings.all {
            #expect(bare[setting.key]?.from == (setting.defaultText == nil ? "none" : "default"), "\(setting.key)")
        }
    }

    /// Each setting's flag is in the help of the commands that take it, with the table's help and default.
    @Test func theHelpIsTheTables() throws {
        let sync = try Binary.run(["sync", "--help"]).stdout
        let serve = try Binary.run(["serve", "--help"]).stdout
        let squeeze = { (text: String) in text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        for setting in Settings.all {
            let help = squeeze(Settings.serve.contains(setting) ? serve : sync)
            #expect(help.contains(setting.flag), "\(setting.key)")
            #expect(help.contains(squeeze(setting.helpText)), "\(setting.key): \(setting.helpText)")
        }
    }
}
