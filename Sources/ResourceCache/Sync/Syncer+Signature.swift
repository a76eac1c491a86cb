package import RouteSync
import Transport

extension Syncer {
    /// Checks the table's signature when keys are configured (G8), with the trust this device's
    /// earlier rotations left in the cache, and keeps the trust the sidecar's rotations lead to.
    /// Expiry is judged by the rollout clock, so the tests' clock hook moves it too.
    func verifySignature(table: [UInt8], manifest: [UInt8]?, remote: Remote, downloader: Downloader, inForce: Int64?,
                         cancel: CancelToken?) throws(CenariusError) -> TableSignatureVerifier.Verified? {
        guard let verifier = settings.tableVerifier else { return nil }
        let trust = try TrustStore(layout: layout).read()
        let verified = try verifier.verify(table: table, manifest: manifest, remote: remote, downloader: downloader,
                                           inForce: inForce, trust: trust, now: settings.rollout.now(), cancel: cancel)
        if verified.trust != trust { try TrustStore(layout: layout).write(verified.trust) }
        return verified
    }

    /// A table re-signed with the same bytes and a later expiry (a publisher's scheduled
    /// `routes --expires`) arrives as an unchanged table: its new sidecar is checked here and
    /// recorded, so a refreshed table is not called expired. Only for tables that expire (one more
    /// small request per poll). A sidecar that does not verify changes nothing.
    func refreshSignature(of current: Generation, meta: GenerationMeta, remote: Remote, downloader: Downloader, cancel: CancelToken?) {
        guard let verifier = settings.tableVerifier, meta.signatureExpires != nil, meta.remote == remote.tableURL,
              let table = try? FileSystem.readFile(current.tablePath) else { return }
        do throws(CenariusError) {
            guard case .content(let sidecar, _) = try downloader.fetchDocument(remote.signatureURL, validators: nil, maxBytes: 64 << 10, cancel: cancel),
                  let parsed = try? TableSignature.parse(sidecar, source: remote.signatureURL), parsed.version > (meta.signedVersion ?? 0) else { return }
            var files = [TableSignature.tableRole: table]
            if parsed.manifest != nil { files[TableSignature.releaseRole] = try fetchManifest(remote, downloader: downloader, pending: nil, cancel: cancel)?.bytes }
            let trust = try TrustStore(layout: layout).read()
            let verified = try verifier.check(sidecar: sidecar, files: files, source: remote.tableURL, sidecarSource: remote.signatureURL,
                                              inForce: meta.signedVersion, trust: trust, now: settings.rollout.now())
            if verified.trust != trust {
                effect(.trust)
                try TrustStore(layout: layout).write(verified.trust)
            }
            var meta = meta
            meta.signedVersion = verified.version
            meta.signedAt = verified.signedAt
            meta.signatureExpires = verified.expires
            effect(.metaRefreshed)
            try FileSystem.writeAtomically(meta.encoded(), to: current.metaPath)
        } catch {
            return
        }
    }
}

/// `trust.json` in the cache: the rotations a device followed (docs/signing.md).
package struct TrustStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    package func read() throws(CenariusError) -> TrustState {
        guard FileSystem.exists(layout.trust) else { return TrustState() }
        return try TrustState.parse(FileSystem.readFile(layout.trust, limit: 1 << 20), source: layout.trust)
    }

    package func write(_ state: TrustState) throws(CenariusError) {
        try FileSystem.writeAtomically(state.serialized(), to: layout.trust)
    }
}
