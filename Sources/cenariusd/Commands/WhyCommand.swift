import DeviceSettings
import ArgumentParser
import ReportHeader
import ResourceCache
import RouteSync

/// `cenariusd why [RELEASE]`: one stable code (docs/why.md) and its evidence, from what the
/// device recorded; it never polls.
struct WhyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "why",
        abstract: "Say, with one stable code and its evidence, why this device is or is not on a release.",
        discussion: """
            RELEASE is a release name from its manifest, or the short table hash devices report; \
            without it, the newest release the remote offered at the last poll. Answers from what the \
            device recorded (the last sync, the pending release, holds, the trial); it does not poll. \
            Exit 0 when the device is on the release; else 2 (not yet here), 3 (the remote), 4 \
            (integrity, signature, held back) or 5 (local storage, lock). The codes: docs/why.md.

            Example:
              cenariusd why
              cenariusd why 2026.11-a --json
            """)

    @Argument(help: ArgumentHelp("The release asked about (default: the newest the remote offered).", valueName: "release"))
    var release: String?

    @Flag(help: "Print one JSON object: reason, release, current, evidence, message.") var json = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let settings = try await global.resolved()
        let answer = Self.answer(settings, asked: release)
        if json {
            Output.json(answer)
        } else {
            Output.line("\(answer.reason.rawValue): \(answer.message)")
            if answer.reason != .current { Output.line("  what to do: \(answer.advice)") }
        }
        if answer.reason != .current { throw ExitCode(answer.reason.exitCode) }
    }

    static func answer(_ settings: ResolvedSettings, asked: String?) -> WhyAnswer {
        Why.read(settings.sync, develop: settings.develop != nil, asked: asked)
    }
}
