import DeviceSettings
import ArgumentParser
import ResourceCache
import RouteSync

struct SeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Fill a preset folder from a remote (CI pre-seeding), or check that it matches.",
        discussion: """
            Downloads every file the remote table lists that the preset lacks or holds with another \
            hash, verifies each, and writes the table last. With --check nothing is written: every \
            file is re-hashed and any difference exits 4.

            Example:
              cenariusd seed --remote https://cdn.example.com/app/www --preset ./App/www
              cenariusd seed --remote https://cdn.example.com/app/www --preset ./App/www --check
            """)

    @Flag(help: "Only verify the preset against the remote; exit 4 on any difference.") var check = false
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try Self.perform(try await global.resolved(), check: check, json: json)
    }

    static func perform(_ settings: ResolvedSettings, check: Bool, json: Bool) throws(CenariusError) {
        guard let remote = settings.sync.remote else { throw .usage("seed needs --remote URL") }
        let seeder = Seeder(remote: remote, mirrors: settings.sync.mirrors, preset: settings.sync.preset, transfer: settings.sync.transfer, verifier: settings.sync.tableVerifier)
        let bar = ProgressBar.make("seed", json: json)
        let report = try seeder.seed(check: check, progress: bar.map { bar in { bar.update($0) } })
        bar?.finish()
        if json { Output.json(report) }
        if check {
            if !json {
                Output.line(report.mismatched.isEmpty
                    ? "preset \(settings.sync.preset.root) matches \(remote.tableURL) (\(report.entries) entries)"
                    : "preset \(settings.sync.preset.root) differs from \(remote.tableURL): \(report.mismatched.count) of \(report.entries) entries")
            }
            if !report.mismatched.isEmpty {
                throw .integrity("preset differs from the remote: \(report.mismatched.prefix(10).joined(separator: ", "))\(report.mismatched.count > 10 ? ", …" : "")")
            }
        } else if !json {
            Output.line("seeded \(settings.sync.preset.root): \(report.entries) entries, \(report.downloadedFiles) downloaded (\(Output.bytes(report.downloadedBytes))\(SyncCommand.fetched(report.bytesFetched, held: report.bytesHeld))), "
                + "\(report.keptFiles) kept, \(report.copiedFiles) copied, \(report.removedFiles) removed, \(Output.seconds(report.seconds))")
        }
    }
}
