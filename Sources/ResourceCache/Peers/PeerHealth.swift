import Synchronization

/// Which peers a device may ask now (docs/peers.md): a peer that failed a transfer (refused the
/// connection, stalled, cut the body short, answered an error) is left alone for `faultPause`,
/// and one that sent bytes that do not match their hash for `wrongBytesPause`. A peer that only
/// lacks an object (404) is asked again for the next one. Kept for the life of the process, so
/// a daemon's later syncs remember; shared by the copies of the settings that carry it.
package final class PeerHealth: Sendable {
    /// Seconds a failing peer is avoided: a peer restarting or busy is back within a poll or two.
    package static let faultPause = 60.0
    /// Seconds a peer that sent wrong bytes is avoided: it is broken or hostile, and the origin
    /// is the better source for a while (Delivery Optimization bans such peers; a device's
    /// restart, or a release later, gives it another chance).
    package static let wrongBytesPause = 1800.0

    package enum Verdict: Sendable, Equatable {
        case fault, wrongBytes
    }

    private let avoidedUntil = Mutex<[String: Double]>([:])

    package init() {}

    /// `peers` less those avoided at `now`, in their order.
    package func usable(_ peers: [String], now: Double) -> [String] {
        avoidedUntil.withLock { until in peers.filter { (until[$0] ?? 0) <= now } }
    }

    package func record(_ verdict: Verdict, peer: String, now: Double) {
        let pause = verdict == .wrongBytes ? Self.wrongBytesPause : Self.faultPause
        avoidedUntil.withLock { until in until[peer] = max(until[peer] ?? 0, now + pause) }
    }
}

/// Which peer each object is asked of: spread over the usable peers in turn, starting at a
/// place of the caller's choosing (a random one per sync, so that devices do not all start with
/// the same peer). Pure, so it is tested without a network.
package enum PeerChoice {
    package static func assign(_ count: Int, to peers: [String], start: Int) -> [String] {
        guard !peers.isEmpty else { return [] }
        return (0..<count).map { peers[(start + $0) % peers.count] }
    }
}
