import Foundation
import Daemon
import DeviceSettings
import ResourceCache
import RouteSync
import Settings
import Testing

/// SIGHUP, setting by setting: what the running daemon gets from a reload (`ServeSettings.reloaded`)
/// changes with every setting the table marks as reloading, and with none of those it reads at
/// start only, which are named for the log instead; docs/configuration.md names the same ones.
@Suite struct ReloadTableTests {
    static let folder: String = {
        let root = NSTemporaryDirectory() + "cenarius-reload-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for name in ["key.pub", "other.pub"] {
            _ = FileManager.default.createFile(atPath: root + "/" + name, contents: Data(SigningKeys.encoded(SigningKeys.generate()).public))
        }
        _ = FileManager.default.createFile(atPath: root + "/ca.pem", contents: Data("not read until a request".utf8))
        return root
    }()

    /// A valid value, other than the default, for each setting, as a user writes it.
    static func changed(_ setting: Setting) -> String {
        switch setting.key {
        case "remote": "http://127.0.0.1:9/elsewhere"
        case "public-key": folder + "/key.pub"
        case "cacert", "client-cert", "client-key": folder + "/ca.pem"
        case "signatures-required": "2"
        case "channel": "beta"
        case "routes-name": "Other.json"
        case "native-version": "2.3.0"
        case "header", "otlp-header": "X-Fleet: kiosks"
        case "otlp-endpoint": "http://127.0.0.1:9/v1/traces"
        case "otlp-metrics-endpoint": "http://127.0.0.1:9/v1/metrics"
        case "trace-sampler": "always_off"
        case "download-window", "switch-window": "daily 22:00-06:00"
        case "metered": "defer"
        case "switch-at": "start"
        case "report-in": "query"
        case "health-url": "http://127.0.0.1:9/health"
        case "peer": "http://127.0.0.1:9"
        case "peer-listen": "127.0.0.1:9"
        case "peer-allow": "10.0.0.0/8"
        case "peer-discovery": "on"
        default:
            switch setting.kind {
            case .string, .list: "/somewhere/\(setting.key)"
            case .bool: setting.defaultValue == .bool(true) ? "off" : "on"
            case .int: String(Int(setting.range?.lowerBound ?? 0) + 2)
            case .double: "7.5"
            }
        }
    }

    /// What a setting needs beside it, before and after the change: two keys for two signatures, a
    /// certificate for its key.
    static func companions(_ setting: Setting) -> [String: String] {
        switch setting.key {
        case "signatures-required": ["public-key": folder + "/key.pub\n" + folder + "/other.pub"]
        case "client-key": ["client-cert": folder + "/key.pub"]
        // A trace's header or sampler means something only with a collector to send to.
        case "otlp-header", "trace-sampler": ["otlp-endpoint": "http://127.0.0.1:9/v1/traces"]
        default: [:]
        }
    }

    /// The reload's result, in full, as text (closures print alike, values as they are).
    static func reloaded(with flags: [String: String], beside companions: [String: String]) async throws -> (String, [String]) {
        let environment = ProcessEnvironment(variables: ["HOME": "/nonexistent-home", "XDG_CONFIG_HOME": "/nonexistent-config"])
        let base = ["remote": "http://127.0.0.1:9/base", "cache": folder + "/cache"].merging(companions) { $1 }
        let start = try await SettingSource.regular(flags: base, environment: environment, configFile: nil)
        let reread = try await SettingSource.regular(flags: base.merging(flags) { $1 }, environment: environment, configFile: nil)
        let settings = try ServeSettings.reloaded(reread, start: start, cache: CacheLayout(root: folder + "/cache"))
        var text = ""
        dump(settings.sync, to: &text)
        dump(settings.trial, to: &text)
        dump(settings.trace, to: &text)
        dump(settings.metrics, to: &text)
        return (text, settings.unchanged)
    }

    @Test(arguments: Settings.all)
    func aReloadTakesEveryReloadingSettingAndNamesTheOthers(_ setting: Setting) async throws {
        let (before, _) = try await Self.reloaded(with: [:], beside: Self.companions(setting))
        let (after, unchanged) = try await Self.reloaded(with: [setting.key: Self.changed(setting)], beside: Self.companions(setting))
        if setting.reloads {
            #expect(before != after, "\(setting.key) is marked as reloading but a reload does not hand it to the daemon")
            #expect(unchanged.isEmpty)
        } else {
            #expect(before == after, "\(setting.key) is read at start only but a reload changes the daemon with it")
            #expect(unchanged == [setting.key])
        }
    }

    @Test func theDocumentNamesTheSettingsReadAtStartOnly() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let paragraph = try #require(text.components(separatedBy: "\n\n").first { $0.hasPrefix("`SIGHUP` makes a running daemon") })
        let named = Set(paragraph.matches(of: /`([a-z-]+)`/).map { String($0.1) })
        let startOnly = Set(Settings.all.filter { !$0.reloads }.map(\.key))
        #expect(startOnly.isSubset(of: named), "docs/configuration.md's SIGHUP paragraph does not name \(startOnly.subtracting(named).sorted())")
        #expect(named.intersection(Set(Settings.all.map(\.key))) == startOnly, "it names settings that do reload")
    }
}
