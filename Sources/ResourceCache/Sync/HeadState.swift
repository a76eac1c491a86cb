import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// `head.json` in the cache: the remote's head as this device last read it (docs/remote-layout.md).
/// Its presence is what makes the device poll the head instead of the table; it names the head
/// by a digest of its URL (never the URL, which may carry a password: G5), and keeps the head's
/// validators for the conditional poll, its text for a 304, and the highest version seen.
struct HeadState: Codable, Equatable {
    /// SHA-256 hex of the head's URL.
    var url: String
    var etag: String?
    var lastModified: String?
    /// The highest head version adopted or seen current from this remote: an older head is a
    /// replay or a stale edge, whether the remote signs or not.
    var version: Int64 = 0
    /// The head's text as last fetched; nil until the first poll of a head learned from an index.
    var text: String?
    /// A first install asked for the head and the remote has none: the table is polled, without
    /// asking again, until a release index names a head.
    var absent = false

    static func urlDigest(_ remote: Remote) -> String { ReleaseIndex.tableDigest(Array(remote.headURL.utf8)) }

    var validators: Validators? {
        etag == nil && lastModified == nil ? nil : Validators(etag: etag, lastModified: lastModified)
    }
}

/// Reads and writes `head.json`; a damaged file reads as none (the table is polled again).
struct HeadStore {
    let layout: CacheLayout
    /// Told of every write before it is made (`SyncEffect.headState`).
    var effects: SyncEffects?

    /// The state for `remote`'s head, when this device polls it.
    func read(for remote: Remote) -> HeadState? {
        guard let state = JSONFile.read(HeadState.self, layout.headState), state.url == HeadState.urlDigest(remote) else { return nil }
        return state
    }

    func write(_ state: HeadState) {
        effects?.before(.headState)
        try? JSONFile.write(state, to: layout.headState, durable: false)
    }

    /// Polls the table again from the next sync on (the head failed, or the remote stopped
    /// publishing one), without asking for the head again until a release index names one.
    func forget(_ remote: Remote) {
        rememberAbsent(remote)
    }

    /// A release index said the remote publishes a head: the next poll asks for it.
    func learn(_ remote: Remote) {
        guard read(for: remote)?.absent ?? true else { return }
        write(HeadState(url: HeadState.urlDigest(remote)))
    }

    /// The remote answered that it has no head.
    func rememberAbsent(_ remote: Remote) {
        write(HeadState(url: HeadState.urlDigest(remote), absent: true))
    }
}
