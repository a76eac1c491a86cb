/// The LAN peers a device takes store objects from (`--peer URL`, repeatable), and what it
/// remembers of them. Empty: no peers, and syncs are what they were.
package struct PeerSources: Sendable {
    /// Base URLs (`http://192.168.1.20:8701`), without a trailing slash.
    package var urls: [String] = []
    /// This device as its peers name it: the `--peer` that is its own `--peer-listen` (every device
    /// can be given the same list). It takes a share of each release from the origin for the others
    /// (PeerChoice.owners); nil (a `sync`, or a device not in the list): it takes its all from peers.
    package var me: String?
    /// Shared by the copies of the settings; a daemon's reload hands the old one on.
    package var health = PeerHealth()
    /// What this device's sync is fetching now: its listener says "not yet" for those.
    package var fetching = PeerFetching()
    /// What each peer found by DNS-SD says of itself (its `rel=`), by URL; the static `--peer`s are not in it.
    package var announced: [String: PeerReleases] = [:]

    /// Whether a sync asks `url`: a static peer always; a found one when its records name the release
    /// being fetched (in force there, or being fetched there too), or the same release in force as
    /// here (it is about to fetch the same head; before a first install, neither names one). Records
    /// are a hint: a peer that names a release it does not hold costs 404s, never a wrong byte.
    package func asks(_ url: String) -> Bool {
        guard let said = announced[url], let here = fetching.current, let release = here.fetching else { return true }
        return said.inForce == release || said.fetching == release || said.inForce == here.inForce
    }

    /// Seconds to connect, and seconds below `lowSpeedBytes` per second before a peer's transfer
    /// is given up for the origin: a killed or stalled peer costs this, not a failed sync.
    package static let timeout = 3
    package static let lowSpeedBytes = 16 << 10
    /// Connections a device opens to one peer at once (ChromeOS allows 3 LAN downloads), and to its
    /// peers in all: two each to up to eight peers, one each past that, so that with a peer's default
    /// cap of 16 connections eight devices asking it at once all fit (a ninth is told "busy"). Devices
    /// that sync together ask each owner over two connections too (OwnersMeanwhile.lanes).
    package static let connections = 2
    package static let connectionsInAll = 16

    /// (in all, to one peer) for a device asking `peers` peers.
    package static func connections(asking peers: Int) -> (all: Int, each: Int) {
        let each = peers > connectionsInAll / connections ? 1 : connections
        return (max(1, min(connectionsInAll, each * peers)), each)
    }
    /// Seconds a device waits, asking every half second, for objects their owner says it is still
    /// fetching (503 "not yet") before it takes them from the origin: devices that start together
    /// fetch their shares at once, so the owners' ends are seconds apart, and a peer that says
    /// "not yet" forever costs this much, not a failed sync.
    package static let notYetWait = 12.0
    /// The request header that names the release an asker fetches (its table's first 16 hex digits,
    /// as `rel=` does): a peer that holds another and is not fetching it takes it for a sign that its
    /// origin has a release it has not polled for yet.
    package static let releaseHeader = "Cenarius-Release"
    /// The request header that asks a peer as the object's owner (OwnersMeanwhile): one that is
    /// about to fetch it holds the request until its download begins, then sends it as it arrives,
    /// rather than answering "not yet" at once as it does a device asking only in case it holds it.
    package static let ownerHeader = "Cenarius-Asks-Owner"
    package static let notYetRetry = 0.25

    package init(urls: [String] = [], me: String? = nil) {
        self.urls = urls.map(Self.base)
        self.me = me.map(Self.base)
    }

    private static func base(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
}

/// A device's releases as its TXT records name them (the first 16 hex digits of a table's SHA-256):
/// the one in force, and the one its sync is fetching.
package struct PeerReleases: Sendable, Equatable {
    package var inForce: String?
    package var fetching: String?

    package init(inForce: String?, fetching: String?) {
        self.inForce = inForce.map { String($0.prefix(16)) }
        self.fetching = fetching.map { String($0.prefix(16)) }
    }
}
