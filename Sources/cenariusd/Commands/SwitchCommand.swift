import DeviceSettings
import ArgumentParser
import Daemon
import ResourceCache
import RouteSync

struct SwitchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switch",
        abstract: "Switch to the release that waits downloaded (install policies).",
        discussion: """
            For a device whose daemon runs with --switch-at start: the release it downloaded \
            switches now, as at the daemon's next start. An operator at a shell means now: the \
            switch windows and inhibit files are overridden, as by POST /_cenarius/switch \
            {"force": true}; holds, gates and a halted rollout still apply. With a daemon serving \
            the cache, the daemon is asked and this waits for its sync; otherwise the switch is \
            made here.

            Example:
              cenariusd switch
              cenariusd switch --json
            """)

    /// Accepted so that scripts written when it was needed keep working; a switch from the shell
    /// always overrides windows and inhibit files (the contract's "Install policies").
    @Flag(help: "Accepted for scripts: `switch` always overrides --switch-window and --inhibit-file (not holds or gates).")
    var force = false
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions
    @OptionGroup var serveSettings: ServeSettingsOptions

    func run() async throws {
        let source = try await global.source(commandFlags: serveSettings.flagValues)
        let settings = try ServeSettings.resolved(source).sync
        let report: SyncReport
        if let daemon = Daemon.running(cache: settings.cache) {
            let receipt = try DaemonControl.post(daemon, "/_cenarius/switch", json: "{\"force\": true}")
            guard let id = receipt.id else { throw CenariusError.internal("the daemon's switch answer names no sync") }
            report = try await DaemonControl.waitForSync(id, daemon: daemon, what: "switch")
        } else {
            var syncer = Syncer(settings: settings)
            syncer.switching = .force
            report = try syncer.sync()
        }
        if json { Output.json(report); return }
        switch report.outcome {
        case .committed: Output.line("switched to generation \(report.generation ?? 0)")
        case .held, .deferred: Output.line("not switched: \(report.deferred.map { "\($0.reason): \($0.detail)" } ?? report.outcome.rawValue)")
        default: Output.line("nothing to switch to (\(report.outcome.rawValue))")
        }
    }
}
