#if canImport(Glibc)
import Glibc
#endif
package import ResourceCache
import RouteSync
import Synchronization

/// The peers DNS-SD found on the LAN, kept up to date by PeerDiscovery and read by each of the
/// daemon's syncs, which asks them after the static `--peer`s (docs/peers.md). Emptied when
/// Avahi or the bus goes away: the static peers and the origin are then what a sync has.
package final class PeerDirectory: Sendable {
    package struct Found: Sendable, Equatable {
        package var url: String
        /// What its records name: the release in force there and the one it is fetching.
        package var releases: PeerReleases

        package init(url: String, releases: PeerReleases = PeerReleases(inForce: nil, fetching: nil)) {
            self.url = url
            self.releases = releases
        }
    }

    private let found = Mutex<[String: Found]>([:])
    /// The browse has given its first answers (Avahi's AllForNow), or there is no Avahi to wait for.
    private let settled = Atomic<Bool>(false)
    /// Seconds a sync waits at most for the first answers: a device that starts with its
    /// peers finds them before its first fetch, and one without Avahi does not wait.
    package static let settleTime = 3.0
    private let me = Mutex<String?>(nil)

    package init() {}

    /// Peers kept at most: a LAN flooded with announcements costs a bounded list.
    static let limit = 64

    func set(_ key: String, _ peer: Found) {
        found.withLock { found in
            if found[key] != nil || found.count < Self.limit { found[key] = peer }
        }
    }
    func remove(_ key: String) { found.withLock { _ = $0.removeValue(forKey: key) } }
    func clear() { found.withLock { $0.removeAll() } }
    func claim(_ url: String) { me.withLock { $0 = url } }

    /// This daemon's own announcement as resolved on the LAN (its URL to its peers), once seen.
    package var ownURL: String? { me.withLock { $0 } }
    func settle() { settled.store(true, ordering: .relaxed) }

    /// The peers a sync may ask: the static ones, then every found one (once the browse has settled
    /// or `settling` seconds have passed), with what each found one's records name. Which of them the
    /// sync asks is decided once it has the head's table (PeerSources.asks: those naming that release,
    /// or holding the same one as this device), not from the records' versions: a device that claims
    /// a newer release than it holds then draws no request it cannot answer. On the sync's thread.
    package func joined(to urls: [String], settling: Double = 0) -> (urls: [String], announced: [String: PeerReleases]) {
        let until = FileSystem.monotonic() + settling
        while !settled.load(ordering: .relaxed) && FileSystem.monotonic() < until { usleep(50_000) }
        let peers = found.withLock { Array($0.values) }.sorted { $0.url < $1.url }
        var joined = urls
        var announced: [String: PeerReleases] = [:]
        for peer in peers where !urls.contains(peer.url) {
            if announced[peer.url] == nil { joined.append(peer.url) }
            announced[peer.url] = peer.releases
        }
        return (joined, announced)
    }
}
