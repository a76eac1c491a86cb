package import Crypto

/// With a public key configured, every table must come with a valid `Routes.json.sig`, and its
/// version may never go down (G8). Unsigned, badly signed and older tables are integrity errors.
package struct TableSignatureVerifier: Sendable {
    package let key: Curve25519.Signing.PublicKey

    package init(key: Curve25519.Signing.PublicKey) {
        self.key = key
    }

    package init(publicKeyFile path: String) throws(CenariusError) {
        key = try SigningKeys.readPublic(path)
    }

    package var keyID: String { TableSignature.keyID(of: key) }

    /// Fetches and checks the sidecar of `table` (and of the release `manifest` beside it, if the
    /// remote has one); returns its version.
    /// - Parameter inForce: the version of the table currently in force, if it was signed.
    package func verify(table: [UInt8], manifest: [UInt8]? = nil, remote: Remote, downloader: Downloader, inForce: Int64?, cancel: CancelToken? = nil) throws(CenariusError) -> Int64 {
        try verified(table: table, manifest: manifest, remote: remote, downloader: downloader, inForce: inForce, cancel: cancel).version
    }

    /// As `verify`, returning the whole sidecar (which also says what release index it covers).
    package func verified(table: [UInt8], manifest: [UInt8]? = nil, remote: Remote, downloader: Downloader, inForce: Int64?,
                          cancel: CancelToken? = nil) throws(CenariusError) -> TableSignature {
        let document: Document
        do {
            document = try downloader.fetchDocument(remote.signatureURL, validators: nil, maxBytes: 64 << 10, cancel: cancel)
        } catch {
            if error.isMissingRemoteFile {
                throw .integrity("\(remote.tableURL) is not signed (no \(remote.routesName).sig) but a public key is configured")
            }
            throw error
        }
        guard case .content(let bytes, _) = document else {
            throw .remote("\(remote.signatureURL) answered 304 to an unconditional request")
        }
        let signature = try TableSignature.parse(bytes, source: remote.signatureURL)
        try signature.verify(table: table, manifest: manifest, with: key, source: remote.tableURL)
        if let inForce, signature.version < inForce {
            throw .integrity("\(remote.tableURL) is signed with version \(signature.version), older than version \(inForce) in force (rollback refused)")
        }
        return signature
    }
}
