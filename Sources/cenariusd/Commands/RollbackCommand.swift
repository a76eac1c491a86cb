import ArgumentParser
import Daemon
import ResourceCache
import RouteSync


struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Make the last confirmed generation current again (atomic).",
        discussion: """
            For an operator who shipped a bad build. A release on trial goes back to the confirmed \
            one; a confirmed release to the confirmed one before it (never to a release that failed). \
            The table rolled back from is not applied again by later syncs until the remote publishes \
            a different one. With a daemon serving the cache, the daemon makes the switch. Refused \
            while a hold is active. `status` lists the generations.

            Example:
              cenariusd rollback --cache /var/cache/cenarius
            """)

    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let result: Rollback.Result
        if let daemon = Daemon.running(cache: settings.sync.cache) {
            // The daemon owns the release state (and may be mid-trial): it makes the switch.
            let answer = try DaemonControl.post(daemon, "/_cenarius/rollback", json: "{}")
            guard let from = answer.from else { throw CenariusError.internal("the daemon's rollback answer names no generation") }
            result = Rollback.Result(from: from, to: answer.to)
        } else {
            result = try LocalRelease.rollback(settings: settings.sync)
        }
        if json { Output.json(result) } else { Output.line("generation \(result.to.map(String.init) ?? "preset") is current again (rolled back from \(result.from))") }
    }
}
