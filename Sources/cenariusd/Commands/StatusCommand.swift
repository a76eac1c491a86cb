import DeviceSettings
import ArgumentParser
import Daemon
import FoundationEssentials
import ResourceCache
import RouteSync
import Transport

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the remote, the table in force, its age, generations and cache size.",
        discussion: """
            Example:
              cenariusd status --json
            """)

    @Flag(help: "Print one JSON object.") var json = false

    /// The cache's status with the daemon's info beside it, as one flat object.
    struct Combined: Encodable {
        var cache: CacheStatus
        var daemon: DaemonInfo?
        /// `why`'s answer for the newest release (docs/why.md).
        var why: WhyAnswer?
        /// The running daemon's last sync and next one.
        var sync: SyncHistory?

        enum Key: String, CodingKey { case daemon, sync, why }

        func encode(to encoder: any Encoder) throws {
            try cache.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(daemon, forKey: .daemon)
            try container.encodeIfPresent(sync, forKey: .sync)
            try container.encodeIfPresent(why, forKey: .why)
        }
    }

    /// The running daemon's sync history, asked of the daemon itself (it lives in its memory).
    static func history(of daemon: DaemonInfo) -> SyncHistory? {
        struct Reply: Decodable { var sync: SyncHistory }
        guard let downloader = try? Downloader(options: TransferOptions()),
              case .content(let bytes, _)? = try? downloader.fetchDocument(daemon.url + "/_cenarius/status", validators: nil, maxBytes: 1 << 20)
        else { return nil }
        return (try? JSONDecoder().decode(Reply.self, from: Data(bytes)))?.sync
    }
    @OptionGroup var global: GlobalOptions

    static func show(_ signature: SignatureStatus) {
        var line = signature.version.map { "version \($0)" } ?? "no signed table in force"
        if let expires = signature.expires {
            line += signature.expired ? ", EXPIRED at \(Output.timestamp(expires)) (still served; the remote offers nothing newer)" : ", expires \(Output.timestamp(expires))"
        }
        Output.line("signature:   \(line)")
        if let clock = signature.clock { Output.line("clock:       \(clock)") }
        let retired = signature.retiredKeys.isEmpty ? "" : " (retired: \(signature.retiredKeys.joined(separator: ", ")))"
        Output.line("keys:        \(signature.trustedKeys.joined(separator: ", "))\(retired)")
    }

    func run() async throws {
        let settings = try await global.resolved()
        let status = try CacheStatus.read(settings.sync)
        let daemon = Daemon.running(cache: settings.sync.cache)
        let history = daemon.flatMap(StatusCommand.history)
        if json {
            Output.json(Combined(cache: status, daemon: daemon, why: WhyCommand.answer(settings, asked: nil), sync: history))
            return
        }
        if let daemon {
            Output.line("daemon:      pid \(daemon.pid) serving \(daemon.url), sync every \(Whole.text(daemon.interval)) s")
            if let last = history?.last {
                let what = last.outcome == "failed" ? "failed: \(last.desc ?? "") (\(last.error ?? 0)) \(last.message ?? "")" : last.outcome
                Output.line("last sync:   \(Output.timestamp(last.at)) (\(last.reason)): \(what)")
            }
            if let next = history?.nextSyncAt { Output.line("next sync:   \(Output.timestamp(next))") }
            if let peers = history?.bytesFromPeers, let origin = history?.bytesFromOrigin, peers + origin > 0 {
                Output.line("fetched:     \(Output.bytes(origin)) from the origin, \(Output.bytes(peers)) from peers (since the daemon started)")
            }
        } else {
            Output.line("daemon:      not running")
        }
        func age(_ seconds: Double?) -> String { seconds.map { "\(Whole.clamped($0)) s ago" } ?? "never" }
        Output.line("remote:      \(status.remote ?? "(none)")")
        Output.line("cache:       \(status.cache)")
        Output.line("preset:      \(status.preset)")
        Output.line("table:       \(status.entries) entries from the \(status.tableSource)\(status.generation.map { ", generation \($0)" } ?? "")")
        Output.line("etag:        \(status.etag ?? "-")")
        Output.line("committed:   \(age(status.tableAge))")
        Output.line("checked:     \(age(status.checkedAge))")
        Output.line("objects:     \(status.objects) (\(Output.bytes(status.objectBytes)))")
        if status.trial, let deadline = status.trialDeadline {
            let left = Whole.clamped(deadline - FileSystem.now())
            Output.line("trial:       generation \(status.generation ?? 0) is on trial, \(left) s left to confirm it; falls back to \(status.confirmedGeneration.map { "generation \($0)" } ?? "the preset")")
        } else if let confirmed = status.confirmedGeneration {
            Output.line("confirmed:   generation \(confirmed)")
        }
        if let rollback = status.lastRollback {
            Output.line("rolled back: generation \(rollback.from) → \(rollback.to.map { "generation \($0)" } ?? "the preset") (\(rollback.reason.rawValue), \(age(FileSystem.now() - rollback.at))): \(rollback.detail ?? "")")
        }
        if let deferred = status.deferred {
            let place = deferred.place.map { ", place \(Whole.clamped($0 * 1000) / 10)%" } ?? ""
            let at = deferred.at.map { ", adopts at \(Output.timestamp($0))" } ?? ""
            Output.line("pending:     release \(deferred.release) waits for \(deferred.waitsFor): \(deferred.reason)\(place)\(at)")
        }
        if let signature = status.signature { StatusCommand.show(signature) }
        for hold in status.holds {
            Output.line("hold:        \(hold.id) until \(Output.timestamp(hold.expires))\(hold.reason.isEmpty ? "" : ": " + hold.reason)")
        }
        for generation in status.generations {
            let marks = [generation.current ? "current" : nil, generation.trial == true ? "on trial" : nil, generation.confirmed == true ? "confirmed" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            Output.line("generation \(generation.number)\(marks.isEmpty ? "" : " (\(marks))"): \(generation.entries ?? 0) entries, \(generation.cachedFiles ?? 0) cached files")
        }
    }
}
