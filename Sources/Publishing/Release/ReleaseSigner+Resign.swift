import RouteSync

extension ReleaseSigner {
    /// `resigning` (`fleet --halt-above` on a folder without a head's index): the same table under a changed
    /// manifest, signed anew with a new version, keeping the previous sidecar's rotations and its
    /// lifetime (expiry − signing time) from now, so that a halt never drops a rotation a fleet
    /// still follows or an expiry it relies on; `legacyIndex` (the index under the table's hash),
    /// when the previous sidecar vouched for it, is vouched for again so that devices keep their patches.
    func resign(table: [UInt8], manifest: [UInt8]?, previous bytes: [UInt8]?, legacyIndex: [UInt8]?,
                        source path: String) throws(CenariusError) -> TableSignature {
        let previous = bytes.flatMap { try? TableSignature.parse($0, source: path) }
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let now = FileSystem.now()
        // The previous sidecar's times are the origin's numbers: its lifetime is checked like one.
        let lifetime = previous.flatMap { previous in previous.expires.flatMap { expires in previous.signedAt.map { expires.subtractingReportingOverflow($0) } } }
        let expires = lifetime.map { Int64(now).addingReportingOverflow($0.partialValue) }
        if lifetime?.overflow == true || expires?.overflow == true {
            throw .usage("\(path) holds signing and expiry times whose lifetime cannot be carried over; sign it anew with routes --expires")
        }
        let version = try Self.nextVersion(after: previous?.version, now: now)
        var signature = try TableSignature.unsigned(
            covering: files, version: version, signedAt: lifetime == nil ? nil : Int64(now),
            expires: expires?.partialValue, rotations: previous?.rotations ?? [])
        let privateKeys = try keys.map { key throws(CenariusError) in try SigningKeys.readPrivate(key) }
        for key in privateKeys { try signature.sign(with: key) }
        if let forms = previous?.forms, let index = legacyIndex, TableSignature.digest(index) == forms.index {
            for key in privateKeys { try signature.signForms(index: index, table: table, with: key) }
        }
        return signature
    }
}
