import ArgumentParser
import RouteSync
import Transport

#if canImport(Glibc)
import Glibc
#endif

struct Cenariusd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cenariusd",
        abstract: "Hot-deploy resource manager for Cenarius web assets: sync, verify and serve route tables.",
        discussion: """
            A remote folder holds Routes.json and the files it lists. cenariusd downloads what changed \
            into a verified, generational cache and answers lookups in the order cache → preset → refetch.

            Example:
              cenariusd sync --remote http://127.0.0.1:8701 --preset ./www
              cenariusd resolve index.html --json
            """,
        version: CenariusVersion.string,
        subcommands: [
            ResolveCommand.self, SyncCommand.self, ServeCommand.self, SeedCommand.self, RoutesCommand.self,
            VerifyCommand.self, StatusCommand.self, RollbackCommand.self, ConfirmCommand.self, KeygenCommand.self, OriginCommand.self,
            FleetCommand.self, ConfigCommand.self, WhyCommand.self, ImportCommand.self,
            SwitchCommand.self, PublishCommand.self, ReleasesCommand.self, PromoteCommand.self, HaltCommand.self, ResumeCommand.self, PruneCommand.self, BundleCommand.self,
        ])
}

/// Runs the command and maps every failure onto the contract's exit codes.
@main
enum Main {
    static func main() async {
        var failure: (any Error)?
        do {
            // The fast path runs right here, on the main thread, with no hop to the concurrency
            // pool: starting that pool's first thread waited for the libcurl load (pthread_create
            // takes the loader's lock, which dlopen holds), and a download loop blocked in poll
            // on one of its threads left the hash workers fewer cores.
            if try !FastPath.run(Array(CommandLine.arguments.dropFirst())) {
                try await run()
            }
        } catch {
            failure = error
        }
        // The one way out: a libcurl load started at launch finishes first (`exit` included).
        Downloader.settleBeforeExit()
        switch failure {
        case nil:
            return
        case let error as CenariusError:
            Output.error(error)
            exit(error.code.rawValue)
        case let error?:
            // Help, version and usage errors: argument-parser prints them and exits 0 or 64.
            Cenariusd.exit(withError: error)
        }
    }

    private static func run() async throws {
        var command = try Cenariusd.parseAsRoot()
        if var asyncCommand = command as? any AsyncParsableCommand {
            try await asyncCommand.run()
        } else {
            try command.run()
        }
    }
}
