import ArgumentParser
import Daemon
import ResourceCache
import RouteSync

#if canImport(Glibc)
import Glibc
#endif

struct ConfirmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm",
        abstract: "Confirm the generation on trial, so that it is not rolled back (G9).",
        discussion: """
            For scripts and native shells around the web view; a page does the same with \
            POST /_cenarius/ready {"generation": N}. Naming a generation that is not on trial \
            fails (exit 2): the caller was loaded from another generation. Without --generation, \
            the generation on trial (or the current one) is confirmed.

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
        let layout = try await global.resolved().sync.cache
        let current = GenerationStore(layout: layout).current()?.number
        let store = ReleaseStore(layout: layout)
        let wanted = generation ?? store.read().trial?.generation ?? current ?? 0
        let answer = try store.update { state throws(CenariusError) in
            var machine = TrialMachine(state: state, policy: nil)
            let (answer, _) = machine.confirm(wanted, current: current)
            state = machine.state
            return answer
        }
        let status: String
        switch answer {
        case .confirmed: status = "confirmed"
        case .alreadyConfirmed: status = "already-confirmed"
        case .conflict(let onTrial, let current):
            let now = onTrial.map { "generation \($0) is on trial" } ?? "generation \(current ?? 0) is current and confirmed"
            throw CenariusError.notFound("generation \(wanted) is not on trial: \(now)")
        }
        // A running daemon reads the state again and tells its event streams.
        if let daemon = Daemon.running(cache: layout) { kill(daemon.pid, SIGUSR1) }
        if json {
            Output.json(Outcome(generation: wanted, status: status))
        } else {
            Output.line(status == "confirmed" ? "generation \(wanted) confirmed" : "generation \(wanted) was already confirmed")
        }
    }
}
