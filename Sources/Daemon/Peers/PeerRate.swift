import Synchronization

/// The peer listener's cap on bytes per second, shared by every peer connection (a virtual
/// clock: each chunk reserves its time slot after the last one's), so that what the LAN takes
/// from a device leaves its disk and its own webview room (docs/peers.md).
package final class PeerRate: Sendable {
    private let bytesPerSecond: Double
    /// When the link, at the cap, is free again (monotonic seconds).
    private let freeAt = Mutex<Double>(0)

    /// `bytesPerSecond` 0: no cap.
    package init(bytesPerSecond: Int) {
        self.bytesPerSecond = Double(bytesPerSecond)
    }

    /// How far ahead of the queue a small answer may go: seconds of the cap it may borrow.
    package static let smallBorrow = 0.5

    /// Seconds to wait before sending `bytes` that were just reserved. A `small` answer (an object
    /// of one chunk) goes ahead of the chunks queued before it while they are less than
    /// `smallBorrow` seconds of the cap, its bytes still counted: an asker takes its owner's small
    /// objects one after another on one connection, and each used to wait behind a chunk of every
    /// large stream the owner was sending (B11: 0.2 s an object with fourteen askers' connections),
    /// which made an owner of many small objects the LAN's slowest. The rate over any stretch longer
    /// than the borrow is still the cap.
    package func reserve(_ bytes: Int, now: Double, small: Bool = false) -> Double {
        guard bytesPerSecond > 0 else { return 0 }
        return freeAt.withLock { freeAt in
            let start = max(freeAt, now)
            freeAt = start + Double(bytes) / bytesPerSecond
            return small ? max(0, start - now - Self.smallBorrow) : start - now
        }
    }
}

/// At most `maximum` peer connections served at once. Past it, up to `busyRoom` more are accepted
/// only to be told `503` with a `Retry-After` (a fetching device asks again a little later and does
/// not hold it against this one); past those a connection is closed at once. A flood costs the
/// device a descriptor and an accept each, never a file read.
package final class PeerSlots: Sendable {
    package enum Admission: Sendable, Equatable {
        case serve, busy, refuse
    }

    private let maximum: Int
    /// Connections told "busy" at most at once: room for a LAN's devices to hear it, not a flood's.
    static let busyRoom = 64
    private let open = Mutex(0)

    package init(maximum: Int) {
        self.maximum = maximum
    }

    /// `.serve` and `.busy` hold a slot until `give()`.
    package func take() -> Admission {
        open.withLock { open in
            guard open < maximum + Self.busyRoom else { return .refuse }
            open += 1
            return open <= maximum ? .serve : .busy
        }
    }

    package func give() {
        open.withLock { $0 -= 1 }
    }
}
