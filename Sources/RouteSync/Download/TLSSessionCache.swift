import CCurl

/// TLS sessions (and DNS answers) kept from one download to the next. A daemon holds one for its
/// life, so a poll after the first resumes the TLS session of the last instead of a full
/// handshake with the certificate chain (B7: ~4 KB → ~1 KB per unchanged https poll).
/// libcurl locks it itself (one mutex per kind of data, in the C shim), so every download loop
/// of every sync may use it at once.
package final class TLSSessionCache: @unchecked Sendable {
    let shared: OpaquePointer
    let handle: UnsafeMutableRawPointer

    /// nil when libcurl cannot be loaded.
    package init?() {
        guard let shared = ccurl_share_new(), let handle = ccurl_share_handle(shared) else { return nil }
        self.shared = shared
        self.handle = handle
    }

    deinit { ccurl_share_free(shared) }
}
