import ArgumentParser
import Daemon
import ResourceCache
import RouteSync

#if canImport(Glibc)
import Glibc
#endif

struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Make the previous generation current again (atomic).",
        discussion: """
            For an operator who shipped a bad build. The table rolled back from is not applied again \
            by later syncs until the remote publishes a different one. `status` lists the generations.

            Example:
              cenariusd rollback --cache /var/cache/cenarius
            """)

    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let result = try Rollback.run(settings.sync)
        // A running daemon reads the release state again and reports the rollback (reason manual).
        if let daemon = Daemon.running(cache: settings.sync.cache) { kill(daemon.pid, SIGUSR1) }
        if json { Output.json(result) } else { Output.line("generation \(result.to.map(String.init) ?? "preset") is current again (rolled back from \(result.from))") }
    }
}
