import ArgumentParser
import Daemon
import FoundationEssentials
import ResourceCache
import RouteSync

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the remote, the table in force, its age, generations and cache size.",
        discussion: """
            Example:
              cenariusd status --json
            """)

    @Flag(help: "Print one JSON object.") var json = false

    /// The cache's status with the daemon's info beside it, as one flat object.
    struct Combined: Encodable {
        var cache: CacheStatus
        var daemon: DaemonInfo?

        enum Key: String, CodingKey { case daemon }

        func encode(to encoder: any Encoder) throws {
            try cache.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(daemon, forKey: .daemon)
        }
    }
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let status = try CacheStatus.read(settings.sync)
        let daemon = Daemon.running(cache: settings.sync.cache)
        if json {
            Output.json(Combined(cache: status, daemon: daemon))
            return
        }
        if let daemon {
            Output.line("daemon:      pid \(daemon.pid) serving \(daemon.url), sync every \(Int(daemon.interval)) s")
        } else {
            Output.line("daemon:      not running")
        }
        func age(_ seconds: Double?) -> String { seconds.map { "\(Int($0.rounded())) s ago" } ?? "never" }
        Output.line("remote:      \(status.remote ?? "(none)")")
        Output.line("cache:       \(status.cache)")
        Output.line("preset:      \(status.preset)")
        Output.line("table:       \(status.entries) entries from the \(status.tableSource)\(status.generation.map { ", generation \($0)" } ?? "")")
        Output.line("etag:        \(status.etag ?? "-")")
        Output.line("committed:   \(age(status.tableAge))")
        Output.line("checked:     \(age(status.checkedAge))")
        Output.line("objects:     \(status.objects) (\(Output.bytes(status.objectBytes)))")
        for generation in status.generations {
            Output.line("generation \(generation.number)\(generation.current ? " (current)" : ""): \(generation.entries ?? 0) entries, \(generation.cachedFiles ?? 0) cached files")
        }
    }
}
