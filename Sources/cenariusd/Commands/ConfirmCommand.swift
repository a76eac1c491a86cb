import DeviceSettings
import ArgumentParser
import Daemon
import ResourceCache
import RouteSync


struct ConfirmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm",
        abstract: "Confirm the generation on trial, so that it is not rolled back (G9).",
        discussion: """
            For scripts and native shells around the web view; a page does the same with \
            POST /_cenarius/ready {"generation": N}. Naming a generation that is not on trial \
            fails (exit 2): the caller was loaded from another generation. Without --generation, \
            the generation on trial (or the current one) is confirmed. With a daemon serving the \
            cache, the daemon is asked (it owns the release state).

            Example:
              cenariusd confirm --generation 7
            """)

    @Option(help: ArgumentHelp("The generation the app loaded (its X-Cenarius-Generation).", valueName: "n"))
    var generation: Int?
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions

    struct Outcome: Encodable {
        var generation: Int
        var status: String
    }

    func run() async throws {
        let settings = try await global.resolved().sync
        let layout = settings.cache
        let wanted: Int
        let status: String
        if let daemon = Daemon.running(cache: layout) {
            // The daemon owns the release state: it decides, on the same machine as a page's ready.
            wanted = generation ?? ReleaseStore(layout: layout).read().trial?.generation ?? GenerationStore(layout: layout).current()?.number ?? 0
            let answer = try DaemonControl.post(daemon, "/_cenarius/ready", json: "{\"generation\": \(wanted)}")
            status = answer.status ?? "confirmed"
        } else {
            let (confirmed, answer) = try LocalRelease.confirm(generation, settings: settings)
            wanted = confirmed
            switch answer {
            case .confirmed: status = "confirmed"
            case .alreadyConfirmed: status = "already-confirmed"
            case .conflict(let onTrial, let current):
                let now = onTrial.map { "generation \($0) is on trial" } ?? "generation \(current ?? 0) is current and confirmed"
                throw CenariusError.notFound("generation \(wanted) is not on trial: \(now)")
            case .busy(let from, _):
                throw CenariusError.notFound("generation \(wanted) cannot be confirmed now: generation \(from) is being rolled back")
            }
        }
        if json {
            Output.json(Outcome(generation: wanted, status: status))
        } else {
            Output.line(status == "confirmed" ? "generation \(wanted) confirmed" : "generation \(wanted) was already confirmed")
        }
    }
}
