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
    static let valueOptions = ["remote", "preset", "cache", "develop-dir", "public-key", "routes-name", "user-agent", "device-id", "native-version",
                               "cacert", "client-cert", "client-key", "header", "max-rate", "signatures-required"]
    /// Options that may be given more than once; their values are kept in order, one per line.
    static let repeatable: Set<String> = ["remote", "header", "public-key"]

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
            case "connections" where command != "resolve":
                // Out of range or not a number: the regular command line says why.
                guard let value = inline ?? rest.popFirst(), let n = Int(value), (1...256).contains(n) else { return nil }
                request.flags[name] = value
            case "develop" where inline == nil: request.flags["develop"] = "true"
            case "no-develop" where inline == nil: request.flags["develop"] = "false"
            case "report" where inline == nil: request.flags["report"] = "true"
            case "no-report" where inline == nil: request.flags["report"] = "false"
            case _ where valueOptions.contains(name):
                guard let value = inline ?? rest.popFirst(), !value.hasPrefix("--") else { return nil }
                if let earlier = request.flags[name] {
                    // A repeated single-valued option is the regular command line's error to report.
                    guard repeatable.contains(name) else { return nil }
                    request.flags[name] = earlier + "\n" + value
                } else {
                    request.flags[name] = value
                }
            default:
                return nil
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
