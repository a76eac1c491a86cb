/// The LAN peers a device takes store objects from (`--peer URL`, repeatable), and what it
/// remembers of them. Empty: no peers, and syncs are what they were.
package struct PeerSources: Sendable {
    /// Base URLs (`http://192.168.1.20:8701`), without a trailing slash.
    package var urls: [String] = []
    /// Shared by the copies of the settings; a daemon's reload hands the old one on.
    package var health = PeerHealth()

    /// Seconds to connect, and seconds below `lowSpeedBytes` per second before a peer's transfer
    /// is given up for the origin: a killed or stalled peer costs this, not a failed sync.
    package static let timeout = 3
    package static let lowSpeedBytes = 16 << 10
    /// Connections a device opens to its peers at once (ChromeOS allows 3 LAN downloads): with a
    /// peer's default cap of 8, four devices take from one peer at once.
    package static let connections = 2
    /// Files a busy peer turned away are asked again after `busyWait` seconds, at most this many
    /// times, before they go to the origin.
    package static let busyRounds = 5
    package static let busyWait = 1.0

    package init(urls: [String] = []) {
        self.urls = urls.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }
}
