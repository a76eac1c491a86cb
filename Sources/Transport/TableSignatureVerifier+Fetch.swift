package import RouteSync

/// The signature's sidecar, fetched from the remote and checked.
extension TableSignatureVerifier {
    /// Fetches and checks the sidecar of `table` (and of the release `manifest` beside it, if the
    /// remote has one) for a device with nothing in force: a seed, with no trust record of its own.
    package func verify(table: [UInt8], manifest: [UInt8]?, remote: Remote, downloader: Downloader,
                        cancel: CancelToken? = nil) throws(CenariusError) -> Verified {
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let bytes = try Self.sidecar(of: remote, downloader: downloader, cancel: cancel)
        return try check(sidecar: bytes, files: files, source: remote.tableURL, sidecarSource: remote.signatureURL,
                         standing: Standing(inForce: nil, trust: TrustState(), now: FileSystem.now()))
    }

    /// The remote's sidecar, unconditionally; a missing one is the integrity failure of a table
    /// that a device with a public key refuses.
    package static func sidecar(of remote: Remote, downloader: Downloader, cancel: CancelToken?) throws(CenariusError) -> [UInt8] {
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
        return bytes
    }
}
