import Publishing
import RouteSync

/// A stored release put at the head of a channel under a new version: what rollback, promote,
/// halt and resume do. Devices move to it as to any new release (its version is above every
/// one they have seen, so anti-rollback holds); only pointers and the Cenarius layout's changed
/// files are uploaded, since the store already holds every object the release names.
struct Republish {
    struct Summary: Encodable {
        var destination: String
        var channel: String
        var action: String
        var from: Int64?
        var version: Int64
        var table: String
        var release: String?
        var dryRun: Bool
        var uploaded: Int
        var uploadedBytes: Int64
        /// `store`: the channel's head already named this table, and its forms were taken as they
        /// are (pointers only); `reused`: the store's forms and packs, with patches and delta packs
        /// from the channel's last releases made; `made`: compressed anew.
        var forms: String
        var seconds: Double
    }

    let remote: any Destination
    let state: RemoteState
    let options: RepublishOptions

    /// Publishes `head`'s release (from `source`, this remote unless promoting) with `manifest`.
    /// `lock`: the destination's, taken before `state` was read (nil only for a dry run).
    func run(_ head: ReleaseHead, manifest: [UInt8]?, origin: String, action: String, json: Bool, lock: (any PublishLock)?,
             from source: (any Destination)? = nil) throws {
        let started = FileSystem.monotonic()
        let staging = try Staging()
        defer { staging.remove() }
        var publication = Publication(remote: remote, state: state, releaseOptions: try options.releaseOptions)
        publication.pointerMaxAge = options.pointerMaxAge
        publication.origin = origin
        let staged = try publication.republish(head, manifest: manifest, from: source ?? remote, in: staging)
        if let lock, !options.dryRun { try publication.upload(staged.plan, json: json, lock: lock) }
        let name = manifest.flatMap { try? ReleaseManifest.parse($0, source: "manifest") }?.release
        let summary = Summary(destination: remote.description, channel: state.channel, action: action, from: state.head?.version,
                              version: staged.record.head.version, table: head.table, release: name, dryRun: options.dryRun,
                              uploaded: staged.plan.uploads.count, uploadedBytes: staged.plan.bytes, forms: staged.forms,
                              seconds: FileSystem.monotonic() - started)
        if json { Output.json(summary); return }
        let what = name.map { "release \($0) (table \(head.table.prefix(12)))" } ?? "table \(head.table.prefix(12))"
        Output.line("\(options.dryRun ? "would put" : "channel \(state.channel) now serves") \(what) as version \(summary.version) (\(action)); "
            + "\(options.dryRun ? "would upload" : "uploaded") \(summary.uploaded) objects (\(Output.bytes(summary.uploadedBytes))) in \(Output.seconds(summary.seconds))")
    }
}
