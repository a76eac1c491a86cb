import DeviceSettings
import ResourceCache
import RouteSync
import Settings

/// `cenariusd resolve`, `sync` and `seed` without swift-argument-parser and swift-configuration.
///
/// Scripts call `resolve` in loops, devices run `sync` from timers and CI runs `seed` on every
/// build, so their whole-process time is a contract bar (B4 ≤ 10 ms; B2 ≤ 10 ms beyond the round
/// trip; B1 against curl and wget2). Parsing a command line through reflection costs several
/// milliseconds in a binary this size, so the common shapes of these commands are parsed here by
/// hand. Anything this parser does not fully understand — help, an option it does not know or a
/// value out of range, a config file to read — returns nil and the regular command line handles
/// it, with its validation and messages.
enum FastPath {
    /// The shared settings by the names their flags take: `--key`, and `--no-key` for a switch.
    static let flags: [String: (setting: Setting, value: String?)] = Settings.shared.reduce(into: [:]) { flags, setting in
        if setting.kind == .bool {
            flags[setting.key] = (setting, "true")
            flags["no-" + setting.key] = (setting, "false")
        } else {
            flags[setting.key] = (setting, nil)
        }
    }

    struct Request {
        var command: String
        var uri: String
        var json = false
        var check = false
        var options = Resolver.Options()
        var flags: [String: String] = [:]
    }

    static func parse(_ arguments: [String]) -> Request? {
        guard let command = arguments.first, ["resolve", "sync", "seed"].contains(command) else { return nil }
        var request = Request(command: command, uri: "")
        var uri: String?
        var rest = arguments.dropFirst()[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else {
                guard command == "resolve", uri == nil, !argument.hasPrefix("-") else { return nil }
                uri = argument
                continue
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            switch name {
            case "json" where inline == nil: request.json = true
            case "offline" where inline == nil && command == "resolve": request.options.offline = true
            case "strict" where inline == nil && command == "resolve": request.options.strict = true
            case "check" where inline == nil && command == "seed": request.check = true
            default:
                guard let (setting, switchValue) = flags[name] else { return nil }
                if let switchValue {
                    guard inline == nil else { return nil }
                    request.flags[setting.key] = switchValue
                    continue
                }
                // Not a value of the setting's type or range: the regular command line says why.
                guard let value = inline ?? rest.popFirst(), !value.hasPrefix("--"),
                      (try? setting.decode(value, origin: setting.flag)) != nil else { return nil }
                if let earlier = request.flags[setting.key] {
                    // A repeated single-valued option is the regular command line's error to report.
                    guard setting.kind == .list else { return nil }
                    request.flags[setting.key] = earlier + "\n" + value
                } else {
                    request.flags[setting.key] = value
                }
            }
        }
        if command == "resolve" {
            guard let uri else { return nil }
            request.uri = uri
        }
        return request
    }

    /// Runs the command when the fast path applies; false when the regular command line must.
    static func run(_ arguments: [String]) throws(CenariusError) -> Bool {
        guard let request = parse(arguments) else { return false }
        let environment = ProcessEnvironment()
        // A config file is read through swift-configuration on the regular path.
        guard environment.configFile(flag: nil) == nil else { return false }
        let settings = try ResolvedSettings.make(.fast(flags: request.flags, environment: environment))
        switch request.command {
        case "sync":
            try SyncCommand.perform(settings, json: request.json)
        case "seed":
            try SeedCommand.perform(settings, check: request.check, json: request.json)
        default:
            ResolveCommand.emit(try settings.resolver().resolve(request.uri, options: request.options), json: request.json)
        }
        return true
    }
}
