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
        let summary = try publish(head, manifest: manifest, origin: origin, action: action, quiet: json, lock: lock, from: source)
        if json { Output.json(summary); return }
        Output.line(summary.sentence)
    }

    /// The same without a word on stdout: `fleet --halt-above` says it in its own summary.
    func publish(_ head: ReleaseHead, manifest: [UInt8]?, origin: String, action: String, quiet: Bool, lock: (any PublishLock)?,
                 from source: (any Destination)? = nil) throws -> Summary {
        let started = FileSystem.monotonic()
        let staging = try Staging()
        defer { staging.remove() }
        var publication = Publication(remote: remote, state: state, releaseOptions: try options.releaseOptions)
        publication.pointerMaxAge = options.pointerMaxAge
        publication.origin = origin
        let staged = try publication.republish(head, manifest: manifest, from: source ?? remote, in: staging)
        if let lock, !options.dryRun { try publication.upload(staged.plan, json: quiet, lock: lock) }
        let name = manifest.flatMap { try? ReleaseManifest.parse($0, source: "manifest") }?.release
        return Summary(destination: remote.description, channel: state.channel, action: action, from: state.head?.version,
                       version: staged.record.head.version, table: head.table, release: name, dryRun: options.dryRun,
                       uploaded: staged.plan.uploads.count, uploadedBytes: staged.plan.bytes, forms: staged.forms,
                       seconds: FileSystem.monotonic() - started)
    }
}

extension Republish.Summary {
    var sentence: String {
        let what = release.map { "release \($0) (table \(table.prefix(12)))" } ?? "table \(table.prefix(12))"
        return "\(dryRun ? "would put" : "channel \(channel) now serves") \(what) as version \(version) (\(action)); "
            + "\(dryRun ? "would upload" : "uploaded") \(uploaded) objects (\(Output.bytes(uploadedBytes))) in \(Output.seconds(seconds))"
    }
}
