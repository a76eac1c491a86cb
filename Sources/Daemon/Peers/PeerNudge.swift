import Synchronization

/// A peer asks for an object of a release (it names it: `Cenarius-Release`) while this device
/// fetches none: its origin has a release this device has not polled for yet (it missed the SIGHUP
/// its peers got, was switched on late, or its timer is far off). It polls now, rather than at its
/// next turn, and the asker is told "not yet" meanwhile: its share then crosses the uplink once, not
/// once for it and again for its peers (docs/peers.md). One poll for each release named, and none
/// within `floor` seconds of another: a hostile peer naming release after release can make a
/// device poll its origin no more often than that.
final class PeerNudge: Sendable {
    static let floor = 5.0
    /// Seconds askers naming that release are told "not yet" after the poll: its sync reaches its downloads.
    static let waitFor = 10.0
    private let last = Mutex<(release: String?, at: Double)>((nil, -.infinity))
    private let poll: @Sendable () -> Void

    init(poll: @escaping @Sendable () -> Void) {
        self.poll = poll
    }

    /// Whether an asker naming `release` should wait: a poll for it started now, or within `waitFor` seconds.
    func nudged(for release: String, now: Double) -> Bool {
        let started: Bool? = last.withLock { last in
            if last.release == release { return now - last.at < Self.waitFor ? false : nil }
            guard now - last.at >= Self.floor else { return nil }
            last = (release, now)
            return true
        }
        if started == true { poll() }
        return started != nil
    }
}
