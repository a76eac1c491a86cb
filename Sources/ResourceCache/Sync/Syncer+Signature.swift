package import RouteSync

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
