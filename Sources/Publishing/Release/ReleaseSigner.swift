package import RouteSync

/// The sidecar's signature (G8, docs/signing.md) over a release's table, manifest and index,
/// from values: the previous sidecar's bytes, not a file beside the table.
package struct ReleaseSigner: Sendable {
    /// Private key files; every key signs the same version.
    package var keys: [String]
    /// `--rotation`'s statements, read and chained (`readRotations`).
    package var rotations: [KeyRotation] = []
    /// `--table-version`.
    package var version: Int64?
    /// `--expires`, in seconds.
    package var lifetime: Int64?
    /// `fleet --halt-above` on a folder whose head names no index: the same table signed anew
    /// with the previous sidecar's rotations and lifetime (`resign`), whatever the keys ask.
    package var resigning = false

    package init(keys: [String]) { self.keys = keys }

    /// The sidecar a signature is written to (named in messages) and the bytes it held before.
    package struct Sidecar: Sendable {
        package var path: String
        package var previous: [UInt8]?

        package init(path: String, previous: [UInt8]?) {
            self.path = path
            self.previous = previous
        }
    }

    /// What `sign` made, and what the command says of it.
    package struct Signed: Sendable {
        package var signature: TableSignature
        package var keyIDs: [String]
    }

    /// Signs the table and manifest bytes, and the release index when there is one. Over the same
    /// bytes as `previous` with nothing new asked, another key's signature joins the previous ones
    /// (thresholds); anything else is a new version.
    package func sign(table: [UInt8], manifest: [UInt8]?, index: [UInt8]?, over sidecar: Sidecar, warn: (String) -> Void) throws(CenariusError) -> Signed {
        let path = sidecar.path
        if resigning {
            let signature = try resign(table: table, manifest: manifest, previous: sidecar.previous, legacyIndex: index, source: path)
            return Signed(signature: signature, keyIDs: signature.signatures.map(\.keyID))
        }
        let keys = try keys.map { path throws(CenariusError) in try SigningKeys.readPrivate(path) }
        let keyIDs = keys.map { TableSignature.keyID(of: $0) }
        try Self.check(rotations, endingAtOneOf: keyIDs)
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let previous = sidecar.previous.flatMap { try? TableSignature.parse($0, source: path) }
        var signature: TableSignature
        // A new version, an expiry or a new rotation is a new release whatever the bytes.
        let asksNew = version != nil || lifetime != nil || !(rotations.isEmpty || rotations == previous?.rotations)
        if let previous, !asksNew, let same = previous.coSignable(by: keys, over: files, source: path) {
            // The exact bytes the sidecar's signatures are over, and nothing new asked: another
            // signer's signature on the same version (thresholds), not a new release.
            signature = same
            if let expires = same.expires, Double(expires) <= FileSystem.now() {
                warn("\(path) expired at \(UTCTime.text(Double(expires))); devices refuse it with any number of signatures (pass --expires to sign a new version)")
            }
        } else {
            // Anything else is a new release: a new version, and none of the old signatures.
            if let previous, !previous.namesTable, !asksNew, (try? previous.bound(to: files, source: path)) != nil {
                warn("\(path) names no table digest (written before it did) and none of the --sign-key keys signed it, so it may be over other bytes: signing a new version")
            }
            let now = FileSystem.now()
            let version: Int64
            if let asked = self.version { version = asked } else { version = try Self.nextVersion(after: previous?.version, now: now) }
            signature = try TableSignature.unsigned(
                covering: files, version: version,
                signedAt: lifetime == nil ? nil : Int64(now), expires: lifetime.map { Int64(now) + $0 }, rotations: rotations)
        }
        for key in keys { try signature.sign(with: key) }
        if let index {
            for key in keys { try signature.signForms(index: index, table: table, with: key) }
        } else {
            signature.forms = nil
        }
        return Signed(signature: signature, keyIDs: keyIDs)
    }

    /// The default signed version: now in milliseconds, and always above the previous sidecar's,
    /// so two publishers that share no files, and one signing twice in a row, both grow (G8).
    package static func nextVersion(after previous: Int64?, now: Double) throws(CenariusError) -> Int64 {
        let milliseconds = Int64((now * 1000).rounded(.down))
        // A sidecar's version is the origin's number: at Int64.max no later version exists.
        let (next, overflow) = (previous ?? 0).addingReportingOverflow(1)
        guard !overflow else { throw .usage("the previous sidecar holds version \(Int64.max), the largest there is: pass --table-version or remove it") }
        return max(milliseconds, next)
    }

    /// The statements of `--rotation`, read and checked as a chain, so that a mistake shows here
    /// and not as a fleet refusing the release (`sign` checks that it ends at a signing key).
    package static func readRotations(_ paths: [String]) throws(CenariusError) -> [KeyRotation] {
        var chain: [KeyRotation] = []
        for path in paths {
            let bytes: [UInt8]
            do { bytes = try FileSystem.readFile(path, limit: 64 << 10) } catch { throw .usage("cannot read rotation statement \(path): \(error.message)") }
            let rotation = try KeyRotation.parse(bytes, source: path)
            guard rotation.isSigned else { throw .usage("\(path) is not signed by the key it rotates from") }
            if let last = chain.last, last.toID != rotation.fromID {
                throw .usage("\(path) rotates from key \(rotation.fromID), but the statement before it rotates to key \(last.toID) (give them oldest first)")
            }
            chain.append(rotation)
        }
        return chain
    }

    static func check(_ chain: [KeyRotation], endingAtOneOf keyIDs: [String]) throws(CenariusError) {
        if let last = chain.last, !keyIDs.contains(last.toID) {
            throw .usage("the last --rotation rotates to key \(last.toID), but --sign-key is key \(keyIDs.joined(separator: ", "))")
        }
    }
}
