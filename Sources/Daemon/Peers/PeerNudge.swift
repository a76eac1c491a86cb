import Synchronization

/// A peer asks for an object of a release (it names it: `Cenarius-Release`) while this device
/// fetches none: its origin has a release this device has not polled for yet (it missed the SIGHUP
/// its peers got, was switched on late, or its timer is far off). It polls now, rather than at its
/// next turn, and the asker is told "not yet" meanwhile: its share then crosses the uplink once, not
/// once for it and again for its peers (docs/peers.md). At most one poll a minute: a hostile peer
/// can make a device poll its origin no more often than that.
final class PeerNudge: Sendable {
    static let every = 60.0
    /// Seconds askers are told "not yet" after a poll it started: its sync reaches its downloads.
    static let waitFor = 10.0
    private let last = Mutex<Double>(-.infinity)
    private let poll: @Sendable () -> Void

    init(poll: @escaping @Sendable () -> Void) {
        self.poll = poll
    }

    /// Whether the asker should wait: a poll started now, or one started within `waitFor` seconds.
    func nudged(now: Double) -> Bool {
        let started: Bool? = last.withLock { last in
            if now - last < Self.waitFor { return false }
            guard now - last >= Self.every else { return nil }
            last = now
            return true
        }
        if started == true { poll() }
        return started != nil
    }
}
