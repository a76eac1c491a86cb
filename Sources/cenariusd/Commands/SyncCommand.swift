import DeviceSettings
import ArgumentParser
import ResourceCache
import RouteSync
import Telemetry

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync the cache with the remote once, then exit.",
        discussion: """
            Fetches the route table conditionally (a 304 costs nothing else), downloads what no \
            verified copy exists for, and switches to the new generation atomically.

            Example:
              cenariusd sync --remote https://cdn.example.com/app/www --preset ./www
            """)

    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try SyncCommand.perform(try await global.resolved(), json: json)
    }

    /// Shared with the fast path.
    static func perform(_ settings: ResolvedSettings, json: Bool) throws(CenariusError) {
        if settings.develop != nil { throw .usage("sync has nothing to do in develop mode") }
        // The sync's trace is sent before the command exits (a dead collector delays that 2 s at most).
        let telemetry = Telemetry.start(settings.trace, background: false)
        defer { telemetry?.shutdown() }
        let bar = ProgressBar.make("sync", json: json)
        let report = try Syncer(settings: settings.sync).sync(progress: bar.map { bar in { bar.update($0) } })
        bar?.finish()
        if json { Output.json(report) } else { Output.line(SyncCommand.describe(report)) }
        warnIfExpired(settings.sync, report)
    }

    /// A frozen or replaying mirror keeps offering the table in force after it expired (G8): the
    /// sync succeeds, the table stays, and this says so.
    static func warnIfExpired(_ settings: SyncSettings, _ report: SyncReport) {
        guard settings.tableVerifier != nil, report.outcome != .committed,
              let expires = (try? GenerationStore(layout: settings.cache).current()?.meta())??.signatureExpires,
              Double(expires) <= settings.rollout.now() else { return }
        Output.warn("the signed table in force expired at \(Output.timestamp(Double(expires))) and the remote offers nothing newer; still serving it")
    }

    /// ", 20 KiB on the wire" when compressed forms or patches made the transfer smaller than the files (B8).
    static func fetched(_ fetched: Int64, held: Int64) -> String {
        fetched < held ? ", \(Output.bytes(fetched)) on the wire" : ""
    }

    /// Only with peers: a sync without them reads as it always did.
    static func fromPeers(_ report: SyncReport) -> String {
        report.bytesFromPeers > 0 ? ", \(Output.bytes(report.bytesFromPeers)) from peers" : ""
    }

    static func describe(_ report: SyncReport) -> String {
        let seconds = Output.seconds(report.seconds)
        switch report.outcome {
        case .notModified: return "not modified (304): generation \(report.generation.map(String.init) ?? "none") stays current, \(seconds)"
        case .unchanged: return "unchanged: generation \(report.generation.map(String.init) ?? "none") stays current (\(report.entries) entries), \(seconds)"
        case .heldBack:
            return "held back: the remote still publishes the table rolled back from; generation \(report.generation.map(String.init) ?? "none") stays current, \(seconds)"
        case .deferred, .held:
            let deferral = report.deferred
            let until = deferral?.at.map { ", until \(Output.timestamp($0))" } ?? ""
            return "\(report.outcome == .held ? "held" : "deferred"): release \(deferral?.release ?? "?") waits (\(deferral?.reason ?? "?"): \(deferral?.detail ?? "")\(until)); "
                + "generation \(report.generation.map(String.init) ?? "none") stays current, \(seconds)"
        case .committed:
            return "generation \(report.generation ?? 0) is current: \(report.entries) entries, \(report.downloadedFiles) files downloaded (\(Output.bytes(report.downloadedBytes))\(fetched(report.bytesFetched, held: report.bytesHeld))\(fromPeers(report))), "
                + "\(report.reusedObjects) reused, \(report.servedFromPreset) from preset, \(report.importedFromPreset) copied from preset, \(seconds)"
        }
    }
}
