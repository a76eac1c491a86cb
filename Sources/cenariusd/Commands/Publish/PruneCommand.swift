import ArgumentParser
import Publishing
import RouteSync

struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete store objects no kept release of any channel needs (publishers).",
        discussion: """
            Keeps, for every channel, the release its head serves and the --keep newest others besides it, \
            with every object they name (tables, indexes, forms, patches, packs, plain bytes, \
            records); deletes other store objects under _cenarius/ older than --min-age. It fails \
            closed: a kept release it cannot read stops it before anything is deleted, and names \
            it does not know stay. It never races a publish: a publish writes its objects before \
            the head that names them, so objects younger than --min-age stay (a publish that runs \
            longer than the window is the one case to avoid), and prune reads every head again \
            right before deleting and stops if one changed. The Cenarius layout (Routes.json, \
            heads, files at their uris) is never touched.

            Example:
              cenariusd prune s3://assets/app --keep 5 --min-age 24h --dry-run
            """)

    @Argument(help: ArgumentHelp("The remote: a folder, file:///PATH or s3://BUCKET/PREFIX.", valueName: "dest")) var destination: String
    @Option(help: ArgumentHelp("Releases (tables) kept per channel besides the one its head serves.", valueName: "n")) var keep = 3
    @Option(help: ArgumentHelp("Objects younger than this stay whatever names them (90s, 30m, 12h, 7d; 0 for none).", valueName: "duration")) var minAge = "24h"
    @Flag(help: "Say what would be deleted, and delete nothing.") var dryRun = false
    @OptionGroup var remoteOptions: DestinationOptions
    @Flag(help: "Print one JSON object.") var json = false

    struct Summary: Encodable {
        var destination: String
        var dryRun: Bool
        var deleted: [String]
        var deletedBytes: Int64
        var referenced: Int
        var protected: Int
        var kept: [String: [Int64]]
    }

    func validate() throws {
        guard (0...1000).contains(keep) else { throw ValidationError("--keep must be 0 to 1000") }
        guard minAge == "0" || DurationText.seconds(minAge) != nil else { throw ValidationError("--min-age must be a duration such as 30m, 24h or 7d, or 0") }
    }

    func run() async throws {
        let remote = try remoteOptions.open(destination)
        // Under the publish lock, so that no publish writes objects this plan has not seen while it deletes.
        try PublishLocking.run(remote, dryRun: dryRun) { _ in try prune(remote) }
    }

    private func prune(_ remote: any Destination) throws {
        let started = FileSystem.now()
        let all = try RemoteState.read(remote, channel: ReleaseHead.defaultChannel, routesName: remoteOptions.routesName, records: 0)
        var referenced = Set<String>()
        var kept: [String: [Int64]] = [:]
        var heads: [String: [UInt8]] = [:]
        for channel in all.channels.sorted() {
            let state = try RemoteState.read(remote, channel: channel, routesName: remoteOptions.routesName, listing: all.objects)
            heads[state.headKey] = state.headBytes
            // The table the head serves and the newest --keep others (the first of them is what
            // `rollback` goes back to), with every record of them (a halt or resume is the same release).
            var tables = state.head.map { [$0.table] } ?? []
            let besides = tables.count
            for record in state.records.reversed() where !tables.contains(record.head.table) && tables.count - besides < keep { tables.append(record.head.table) }
            var releases = state.records.filter { tables.contains($0.head.table) }.map(\.head)
            if let head = state.head, !releases.contains(where: { $0.version == head.version }) { releases.append(head) }
            for head in releases {
                let parts: StoredRelease.Parts
                do {
                    parts = try StoredRelease.parts(of: head, from: remote)
                } catch {
                    throw CenariusError.integrity("cannot account for release \(head.version) of channel \(channel) (\(error.message)): nothing was deleted")
                }
                referenced.formUnion(Prune.references(of: head, table: parts.table, index: parts.index))
                kept[channel, default: []].append(head.version)
            }
        }
        // A default channel from before heads (`Routes.json` and the index under its hash, no head)
        // is served all the same: its forms stay, or its devices fall back to plain files.
        if all.head == nil, let table = all.table, let tableBytes = all.tableBytes {
            let indexKey = ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(tableBytes))
            if all.objects[indexKey] != nil {
                guard let bytes = try remote.read(indexKey, limit: 32 << 20), let index = try? ReleaseIndex.parse(bytes, source: indexKey) else {
                    throw CenariusError.integrity("cannot account for the forms of \(remote.description)\(all.routesName) (\(indexKey) does not read): nothing was deleted")
                }
                referenced.insert(indexKey)
                referenced.formUnion(index.objects(for: table))
            }
        }
        let window = minAge == "0" ? 0 : Double(DurationText.seconds(minAge) ?? 0)
        let plan = Prune(objects: all.objects, referenced: referenced, olderThan: started - window)
        var summary = Summary(destination: remote.description, dryRun: dryRun, deleted: plan.deletions, deletedBytes: plan.bytes,
                              referenced: plan.referenced, protected: plan.protected, kept: kept)
        if !dryRun, !plan.deletions.isEmpty {
            // A head that moved meanwhile names objects this plan did not see: start again rather than guess.
            for (key, bytes) in heads where try remote.read(key, limit: ReleaseHead.maxBytes) != bytes {
                throw CenariusError.storage("\(remote.description)\(key) changed while prune ran (a publish?): nothing was deleted; run prune again")
            }
            var deleted: [String] = []
            try remote.delete(plan.deletions) { deleted.append($0) }
            summary.deleted = deleted.sorted()
        }
        if json { Output.json(summary); return }
        for key in plan.deletions { Output.line("\(dryRun ? "would delete" : "deleted") \(key)") }
        let releases = kept.values.reduce(0) { $0 + $1.count }
        Output.line("\(dryRun ? "would delete" : "deleted") \(plan.deletions.count) objects (\(Output.bytes(plan.bytes))); kept \(plan.referenced) that \(releases) releases name "
            + "and \(plan.protected) younger than \(minAge)")
    }
}
