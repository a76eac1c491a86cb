import ResourceCache
import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// The health check that can confirm a trial: a command (exit 0 passes, anything else fails at
/// once) or a URL (a 2xx passes; errors and other statuses are retried every second, since the
/// app behind it may still be starting, until the deadline fails it).
struct HealthCheck: Sendable {
    let options: TrialOptions
    let transfer: TransferOptions
    /// The daemon's running commands, killed when it stops.
    let groups: ProcessGroups

    struct Result: Sendable {
        var passed: Bool
        var detail: String
    }

    /// Blocking: call it off the cooperative pool. `deadline` is wall-clock seconds.
    func run(generation: Int, deadline: Double, cancel: CancelToken) -> Result {
        if let command = options.healthCommand {
            let outcome = ShellCommand(command: command, environment: ["CENARIUS_GENERATION": String(generation)])
                .run(timeout: max(0, deadline - FileSystem.now()), cancel: cancel, groups: groups)
            if !outcome.succeeded { return Result(passed: false, detail: "health command \(outcome.description)") }
            if options.healthURL == nil { return Result(passed: true, detail: "health command passed") }
        }
        guard let url = options.healthURL else { return Result(passed: true, detail: "no health check") }
        var last = "no answer"
        while !cancel.isCancelled {
            do {
                let downloader = try Downloader(options: transfer)
                _ = try downloader.fetchDocument(url, validators: nil, maxBytes: 1 << 20, cancel: cancel)
                return Result(passed: true, detail: "health URL answered 2xx")
            } catch {
                last = error.message
            }
            if FileSystem.now() + 1 >= deadline { break }
            usleep(1_000_000)
        }
        return Result(passed: false, detail: "health URL \(url) did not answer 2xx in time: \(last)")
    }
}
