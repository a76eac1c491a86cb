import DeviceSettings
import ArgumentParser
import ResourceCache
import RouteSync

struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Print the local path of a uri: cache, then preset, then refetch.",
        discussion: """
            Exit codes: 0 found, 2 not in the table, 3 nothing current can be had (with --strict), \
            4 invalid table, 5 cache problem.

            Example:
              cenariusd resolve js/app.js --json
              {"hash":"…","path":"/home/me/.cache/cenarius/generations/3/files/js/app.js","source":"cache","stale":false,"uri":"js/app.js"}
            """)

    @Argument(help: ArgumentHelp("The uri, as listed in Routes.json (a ?query or #fragment is ignored).", valueName: "uri"))
    var uri: String

    @Flag(help: "Print one JSON object.") var json = false
    @Flag(help: "Never contact the remote.") var offline = false
    @Flag(help: "Fail (exit 3) rather than hand out a stale copy.") var strict = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let resolution = try settings.resolver().resolve(uri, options: .init(offline: offline, strict: strict))
        ResolveCommand.emit(resolution, json: json)
    }

    /// Prints a lookup's answer; shared with the fast path, so both print the same bytes.
    static func emit(_ resolution: Resolution, json: Bool) {
        if let warning = resolution.warning { Output.warn(warning) }
        Output.line(json ? resolution.jsonText() : resolution.path)
    }
}
