import Publishing
import ReportHeader
import RouteSync

/// The one way a channel's rollout is halted or resumed (G10): `halt`, `resume` and
/// `fleet --halt-above` all republish the channel's release with `"halted"` set, under the
/// publish lock and as a new version with its release record, so a halt is in `releases` and
/// devices polling the head learn of it as of any release.
struct Halting {
    let remote: any Destination
    let channel: String
    let routesName: String
    let options: RepublishOptions

    enum Outcome {
        /// The rollout already was as asked; nothing uploaded.
        case already(version: Int64)
        /// The channel now serves another release than the one the caller decided on; nothing uploaded.
        case moved(to: String)
        case republished(Republish.Summary)
    }

    /// Sets the halt. `release`: with a name, only while the channel's head still serves that
    /// release (a `fleet` verdict is about the release it counted, not whatever was published since).
    func set(_ halted: Bool, origin: String, quiet: Bool, release: String? = nil) throws -> Outcome {
        try PublishLocking.run(remote, dryRun: options.dryRun) { lock in
            let state = try RemoteState.read(remote, channel: channel, routesName: routesName, records: 6)
            guard let head = state.head else { throw CenariusError.notFound("channel \(channel) of \(remote.description) has no head") }
            let manifest = try Self.manifest(of: head, source: state.headKey)
            if let release, Self.name(of: head, manifest: manifest) != release { return .moved(to: Self.name(of: head, manifest: manifest)) }
            guard (manifest.rollout?.halted ?? false) != halted else { return .already(version: head.version) }
            let summary = try Republish(remote: remote, state: state, options: options)
                .publish(head, manifest: Self.setting(halted, in: manifest).serialized(), origin: origin,
                         action: halted ? "halted" : "resumed", quiet: quiet, lock: lock)
            return .republished(summary)
        }
    }

    static func manifest(of head: ReleaseHead, source: String) throws(CenariusError) -> ReleaseManifest {
        try head.release.map { bytes throws(CenariusError) in try ReleaseManifest.parse(bytes, source: source) } ?? ReleaseManifest()
    }

    /// How devices name the release in their reports: its manifest's name, else a short hash of its table.
    static func name(of head: ReleaseHead, manifest: ReleaseManifest) -> String {
        manifest.release ?? FleetReport.releaseName(ofDigest: head.table)
    }

    /// `manifest` halted or resumed; a release published without a rollout gets one that started now, whole.
    static func setting(_ halted: Bool, in manifest: ReleaseManifest) -> ReleaseManifest {
        var manifest = manifest
        var rollout = manifest.rollout ?? .init(start: UnixTime(exactly: FileSystem.now().rounded(.down)) ?? 0, duration: .zero)
        rollout.halted = halted
        manifest.rollout = rollout
        return manifest
    }
}
