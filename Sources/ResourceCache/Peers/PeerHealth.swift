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
    /// When each peer's last stream of a form it was still fetching broke off.
    private let brokenStreams = Mutex<[String: Double]>([:])

    package init() {}

    /// `peers` less those avoided at `now`, in their order.
    package func usable(_ peers: [String], now: Double) -> [String] {
        avoidedUntil.withLock { until in peers.filter { (until[$0] ?? 0) <= now } }
    }

    /// A peer's stream of a form it was still fetching itself broke off (its own download did, or
    /// paused too long): forgiven once a `faultPause` and asked again, so that a peer whose streams
    /// keep breaking (or that only says its bodies grow) costs a stall or two, then is avoided.
    package func forgives(brokenStreamOf peer: String, now: Double) -> Bool {
        brokenStreams.withLock { last in
            defer { last[peer] = now }
            return last[peer].map { now - $0 >= Self.faultPause } ?? true
        }
    }

    package func record(_ verdict: Verdict, peer: String, now: Double) {
        let pause = verdict == .wrongBytes ? Self.wrongBytesPause : Self.faultPause
        avoidedUntil.withLock { until in until[peer] = max(until[peer] ?? 0, now + pause) }
    }
}

/// Which peer each object is asked of. Pure, so it is tested without a network.
package enum PeerChoice {
    /// Each object's owner among `peers` (this device among them, as they name it): the one
    /// whose weight for the object's hash is highest (rendezvous hashing). Every device given
    /// the same list reckons the same owner for each object, so the owners fetch the release
    /// from the origin once between them and the others ask them; a peer leaving moves only
    /// its own objects, to the next weight. The weight is a fixed function of the two strings
    /// (FNV-1a, then a SplitMix64 finish), never the process's seeded `Hasher`.
    package static func owner(of object: String, among peers: [String]) -> String? {
        ranked(object, among: peers).first
    }

    /// `peers` in the order of their weight for `object`, highest first.
    package static func ranked(_ object: String, among peers: [String]) -> [String] {
        peers.sorted { weight(object, $0) > weight(object, $1) || (weight(object, $0) == weight(object, $1) && $0 > $1) }
    }

    package static func weight(_ object: String, _ peer: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in object.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0x2f) &* 0x100_0000_01b3
        for byte in peer.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }
}
