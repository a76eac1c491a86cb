import DeviceSettings
import ArgumentParser
import Daemon
import ResourceCache
import RouteSync

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Apply an offline bundle (a file or a folder from `cenariusd bundle`), touching no network.",
        discussion: """
            The bundle is applied as a release from the origin would be: the same public keys and \
            thresholds, versions never go back, expiry honoured, trial and rollback as configured. \
            With a daemon serving the cache, the daemon is asked to do it (POST /_cenarius/import) \
            and this waits for it; otherwise it is done here. Afterwards the device writes its report \
            (the Cenarius-Report fields and the why code) into cenarius-reports/ beside the bundle; \
            a read-only or full stick is a warning, not a failed import. Exit 2 when the bundle \
            holds nothing for this device (another channel, another base), 4 when it is damaged, \
            truncated, older than the release in force or its signature does not hold.

            Example:
              cenariusd import /media/stick/app.cenarius.tar
              cenariusd import /media/stick/app --json
            """)

    @Argument(help: ArgumentHelp("The bundle: a file (POSIX tar) or a folder.", valueName: "bundle")) var bundle: String
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions
    @OptionGroup var serveSettings: ServeSettingsOptions

    func run() async throws {
        let source = try await global.source(commandFlags: serveSettings.flagValues)
        let settings = try ServeSettings.resolved(source).sync
        let path = FileSystem.absolute(bundle)
        let report: SyncReport
        if let daemon = Daemon.running(cache: settings.cache) {
            let receipt = try DaemonControl.post(daemon, "/_cenarius/import", json: "{\"path\": \(JSONText.quoted(path))}")
            guard let id = receipt.id else { throw CenariusError.internal("the daemon's import answer names no sync") }
            report = try await DaemonControl.waitForSync(id, daemon: daemon, what: "import")
            if let problem = report.imported?.reportProblem { Output.warn(problem) }
        } else {
            let bar = ProgressBar.make("import", json: json)
            report = try BundleImport(settings: settings).run(path, progress: bar.map { bar in { bar.update($0) } }, warn: Output.warn)
            bar?.finish()
        }
        if json { Output.json(report); return }
        Output.line(SyncCommand.describe(report))
        if let written = report.imported?.report { Output.line("report: \(written)") }
    }
}
