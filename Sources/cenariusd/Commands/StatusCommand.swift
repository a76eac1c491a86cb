import ArgumentParser
import Foundation
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
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let status = try CacheStatus.read(settings.sync)
        if json {
            Output.json(status)
            return
        }
        func age(_ seconds: Double?) -> String { seconds.map { String(format: "%.0f s ago", $0) } ?? "never" }
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
