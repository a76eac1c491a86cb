import RouteSync
import Transport

extension Syncer {
    /// The gate every signature passes (G8): the only writer of trust, the signed version in
    /// force and the head version seen.
    var gate: ReleaseGate { ReleaseGate(settings) }
}

extension SyncRun {
    /// The remote's sidecar for `table` (and its manifest) through the gate; nil, and nothing
    /// fetched, without keys.
    func acceptSidecar(table: [UInt8], manifest: [UInt8]?, inForce: Int64?) throws(CenariusError) -> TableSignatureVerifier.Verified? {
        guard gate.signs else { return nil }
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let sidecar = try TableSignatureVerifier.sidecar(of: remote, downloader: downloader, cancel: cancel)
        return try gate.accept(sidecar: sidecar, files: files, remote: remote, inForce: inForce)
    }

    /// A table re-signed with the same bytes and a later expiry (a publisher's scheduled
    /// `routes --expires`) arrives as an unchanged table: its new sidecar is checked here and
    /// recorded, so a refreshed table is not called expired. Only for tables that expire (one more
    /// small request per poll). A sidecar that does not verify changes nothing.
    func refreshSignature(of current: Generation, meta: GenerationMeta) {
        guard gate.signs, meta.signatureExpires != nil, meta.remote == remote.tableURL,
              let table = try? FileSystem.readFile(current.tablePath) else { return }
        do throws(CenariusError) {
            guard case .content(let sidecar, _) = try downloader.fetchDocument(remote.signatureURL, validators: nil, maxBytes: 64 << 10, cancel: cancel),
                  let parsed = try? TableSignature.parse(sidecar, source: remote.signatureURL), parsed.version > (meta.signedVersion ?? 0) else { return }
            var files = [TableSignature.tableRole: table]
            if parsed.manifest != nil { files[TableSignature.releaseRole] = try fetchManifest(pending: nil)?.bytes }
            guard let verified = try gate.accept(sidecar: sidecar, files: files, remote: remote, inForce: meta.signedVersion) else { return }
            try gate.keep(verified, for: current, meta: meta)
        } catch {
            return
        }
    }
}
