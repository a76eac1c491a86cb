package import RouteSync
import Synchronization

/// The objects this device's sync is about to fetch or fetching (from the origin or its peers),
/// so that its peer listener answers "not yet" (503, `Retry-After: 1`) for them rather than 404:
/// a device asking for an object its owner has not got yet waits for it instead of taking it
/// across the uplink a second time. Filled when a sync's downloads are planned, emptied when
/// they end; a process's one sync at a time (the writer lock) is its only writer.
package final class PeerFetching: Sendable {
    private let hashes = Mutex<Set<ContentHash>>([])

    package init() {}

    package func begin(_ objects: some Sequence<ContentHash>) {
        hashes.withLock { $0 = Set(objects) }
    }

    package func end() {
        hashes.withLock { $0.removeAll() }
    }

    package func contains(_ hash: ContentHash) -> Bool {
        hashes.withLock { $0.contains(hash) }
    }
}
