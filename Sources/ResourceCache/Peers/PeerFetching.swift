package import RouteSync
import Synchronization

/// The objects this device's sync is about to fetch or fetching (from the origin or its peers),
/// so that its peer listener answers "not yet" (503, `Retry-After: 1`) for them rather than 404:
/// a device asking for an object its owner has not got yet waits for it instead of taking it
/// across the uplink a second time. Filled when a sync's downloads are planned, emptied when
/// they end; a process's one sync at a time (the writer lock) is its only writer. It also says
/// which release that is (announced in the TXT records beside the one in force) and which the
/// device holds, so that the sync asks only peers that name one of them (PeerSources.asks).
package final class PeerFetching: Sendable {
    private let hashes = Mutex<Set<ContentHash>>([])
    private let releases = Mutex<PeerReleases?>(nil)
    /// The forms its sync is downloading for its share, by their names in `peer-forms/`: a peer
    /// asking for one takes it as it arrives rather than once it is whole.
    private let growing = Mutex<[String: GrowingFile]>([:])

    package init() {}

    /// `release`: the first 16 hex digits of the fetched table's SHA-256; `holding`: the table in force's.
    package func begin(_ objects: some Sequence<ContentHash>, release: String? = nil, holding: String? = nil) {
        hashes.withLock { $0 = Set(objects) }
        growing.withLock { $0.removeAll() }
        releases.withLock { $0 = release.map { PeerReleases(inForce: holding, fetching: $0) } }
    }

    package func end() {
        hashes.withLock { $0.removeAll() }
        growing.withLock { $0.removeAll() }
        releases.withLock { $0 = nil }
    }

    /// The release being fetched and the one in force here, while a sync fetches.
    package var current: PeerReleases? { releases.withLock { $0 } }

    /// A form of its share (named as PeerForms names it) is being downloaded into `file`.
    package func grows(_ name: String, in file: GrowingFile) {
        growing.withLock { $0[name] = file }
    }

    /// The download of the form named `name`, while this sync's is under way or just ended.
    package func growing(_ name: String) -> GrowingFile? {
        growing.withLock { $0[name] }
    }

    package func contains(_ hash: ContentHash) -> Bool {
        hashes.withLock { $0.contains(hash) }
    }
}
