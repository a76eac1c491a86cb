import RouteSync
import CCurl

/// What a daemon keeps from one poll to the next: TLS sessions and DNS answers (a libcurl share),
/// and the connection of the last poll. A poll after the first reuses that connection while the
/// origin keeps it open, and otherwise resumes the TLS session of the last instead of a full
/// handshake with the certificate chain (B7: 4.2 KB per unchanged https poll before either).
/// libcurl locks the share itself (one mutex per kind of data, in the C shim), so every download
/// loop of every sync may use it at once.
package final class TLSSessionCache: @unchecked Sendable {
    let shared: OpaquePointer
    let handle: UnsafeMutableRawPointer
    /// Never reassigned but in deinit: the connections go before the share their handles used.
    private(set) var connections: KeptConnections?

    /// nil when libcurl cannot be loaded.
    package init?() {
        guard let shared = ccurl_share_new(), let handle = ccurl_share_handle(shared) else { return nil }
        self.shared = shared
        self.handle = handle
        connections = KeptConnections()
    }

    deinit {
        connections = nil
        ccurl_share_free(shared)
    }
}
