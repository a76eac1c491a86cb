import RouteSync
import CCurl
import Synchronization

/// A multi handle a daemon keeps from poll to poll for its small documents (the table, its
/// signature and manifest). libcurl's connection cache belongs to a multi handle: a downloader
/// made per sync closed the poll's connection with it, so every poll opened a new one (a TCP
/// handshake, a TLS resumption and a new session ticket: ~2.7 KB on the wire, where a poll on
/// the kept connection costs ~0.6 KB, B7). The connection stays as long as the origin keeps it
/// (nginx: 75 s by default) and libcurl's own age limit allows (118 s); after that the next poll
/// opens a new one and resumes the TLS session from the shared cache.
///
/// One sync at a time borrows it; anyone else asking meanwhile (a health check) uses its own.
package final class KeptConnections: Sendable {
    /// What a borrower has: the multi handle, the socket its last document came over, and
    /// whether this poll's connection is worth keeping for the next.
    struct Lease {
        fileprivate(set) var multi: MultiHandle
        var socket: Int32 = -1
        fileprivate var lastUse: Double?
        /// Polls further apart than libcurl reuses a connection (`maxIdle`) close theirs at once:
        /// a connection left to the origin's idle timeout costs its close_notify, FIN and ACKs
        /// anyway, plus TCP keepalive probes while it waits and the reset that answers the
        /// client's own close later (~140 bytes more per poll than closing it at once, B7). A
        /// daemon polls at a steady interval, so the last gap foretells the next.
        fileprivate(set) var keep = true
    }

    /// libcurl's default CURLOPT_MAXAGE_CONN, set on every document transfer to be sure of it.
    static let maxIdle = 118

    private let lent: Mutex<Lease?>

    /// nil when libcurl cannot be loaded.
    package init?() {
        guard ccurl_load() != 0, let multi = Self.makeMulti() else { return nil }
        lent = Mutex(Lease(multi: multi))
    }

    deinit {
        lent.withLock { lease in if let lease { ccurl_multi_cleanup(lease.multi.value) } }
    }

    /// Runs `body` with the kept multi handle, or with nil when another thread has it.
    func borrow<T>(_ body: (inout Lease?) -> T) -> T {
        var lease = lent.withLock { held -> Lease? in
            defer { held = nil }
            return held
        }
        if var held = lease, held.socket >= 0, ccurl_socket_closed_by_peer(held.socket) != 0, let fresh = Self.makeMulti() {
            // The origin closed the connection while it was idle (its keepalive timeout). Closing
            // it here, with the handle it belongs to, spares the next poll a request into a
            // connection that answers with a reset.
            ccurl_multi_cleanup(held.multi.value)
            held.multi = fresh
            held.socket = -1
            lease = held
        }
        let now = FileSystem.monotonic()
        if var held = lease {
            held.keep = Self.worthKeeping(afterGap: held.lastUse.map { now - $0 })
            held.lastUse = now
            lease = held
        }
        defer { if let lease { lent.withLock { $0 = lease } } }
        return body(&lease)
    }

    /// Whether a poll that follows the last by `gap` seconds (nil: the first) keeps its connection.
    static func worthKeeping(afterGap gap: Double?) -> Bool {
        gap.map { $0 <= Double(maxIdle) } ?? true
    }

    private static func makeMulti() -> MultiHandle? {
        guard let handle = ccurl_multi_init() else { return nil }
        // A table host and its mirrors; transfers run one at a time.
        _ = ccurl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, 4)
        return MultiHandle(value: handle)
    }
}
