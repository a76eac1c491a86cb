#if canImport(Glibc)
import Glibc
#endif
import RouteSync
import Synchronization

/// The peers DNS-SD found on the LAN, kept up to date by PeerDiscovery and read by each of the
/// daemon's syncs, which asks them after the static `--peer`s (docs/peers.md). Emptied when
/// Avahi or the bus goes away: the static peers and the origin are then what a sync has.
package final class PeerDirectory: Sendable {
    package struct Found: Sendable, Equatable {
        package var url: String
        package var version: Int64?

        package init(url: String, version: Int64?) {
            self.url = url
            self.version = version
        }
    }

    private let found = Mutex<[String: Found]>([:])
    /// The browse has given its first answers (Avahi's AllForNow), or there is no Avahi to wait for.
    private let settled = Atomic<Bool>(false)
    /// Seconds a sync waits at most for the first answers: a device that starts with its
    /// peers finds them before its first fetch, and one without Avahi does not wait.
    package static let settleTime = 3.0
    /// The version of the head the release in force here came from (nil: none yet).
    private let mine = Mutex<Int64?>(nil)
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
    func hold(_ version: Int64?) { mine.withLock { $0 = version } }
    func claim(_ url: String) { me.withLock { $0 = url } }

    /// This daemon's own announcement as resolved on the LAN (its URL to its peers), once seen.
    package var ownURL: String? { me.withLock { $0 } }
    func settle() { settled.store(true, ordering: .relaxed) }

    /// The URLs a sync asks: the static ones, then the found ones it should ask (`chosen`), once
    /// the browse has settled or `settling` seconds have passed. On the sync's thread.
    package func joined(to urls: [String], settling: Double = 0) -> [String] {
        let until = FileSystem.monotonic() + settling
        while !settled.load(ordering: .relaxed) && FileSystem.monotonic() < until { usleep(50_000) }
        let peers = found.withLock { Array($0.values) }
        return urls + Self.chosen(peers, mine: mine.withLock { $0 }).filter { !urls.contains($0) }
    }

    /// The peers holding the newest release any peer says it holds, when that is not older than
    /// the one in force here: those hold the release this device is about to fetch (or the one
    /// it is on). A peer on an older release holds nothing this device lacks; asking it would
    /// cost a round of 404s. Before any release, peers that hold none are as good as any.
    package static func chosen(_ peers: [Found], mine: Int64?) -> [String] {
        let rank = { (version: Int64?) in version ?? -1 }
        guard let newest = peers.map({ rank($0.version) }).max(), newest >= rank(mine) else { return [] }
        var urls: [String] = []
        for peer in peers.sorted(by: { $0.url < $1.url }) where rank(peer.version) == newest && !urls.contains(peer.url) {
            urls.append(peer.url)
        }
        return urls
    }
}
