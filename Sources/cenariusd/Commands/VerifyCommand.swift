import DeviceSettings
import ArgumentParser
import ResourceCache
import RouteSync

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Re-hash the cache and the preset and report; exit 4 on any corruption.",
        discussion: """
            Example:
              cenariusd verify --cache /var/cache/cenarius --preset /opt/app/www
            """)

    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let report = try Verifier(settings: settings.sync).verify()
        if json {
            Output.json(report)
        } else {
            Output.line("cache: \(report.objects) objects (\(Output.bytes(report.objectBytes))), \(report.corruptObjects.count) corrupt; "
                + "generation \(report.generation.map(String.init) ?? "none"): \(report.missingInGeneration.count) missing; "
                + "preset: \(report.presetFiles) files, \(report.presetMismatched.count) mismatched, \(report.presetMissing.count) missing")
        }
        if !report.isClean {
            let bad = report.corruptObjects.map { "object \($0)" } + report.missingInGeneration.map { "missing \($0)" } + report.presetMismatched.map { "preset \($0)" }
            throw CenariusError.integrity("verification failed: \(bad.prefix(10).joined(separator: ", "))\(bad.count > 10 ? ", …" : "")")
        }
    }
}
