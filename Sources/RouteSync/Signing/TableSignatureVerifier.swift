package import Crypto

/// With public keys configured, every table must come with a valid `Routes.json.sig` (G8): signed
/// by `required` distinct trusted keys, its version never below the one in force, not expired.
/// Rotation statements published with it change which keys are trusted (docs/signing.md).
package struct TableSignatureVerifier: Sendable {
    /// The configured keys (`--public-key`, repeatable); rotations the device followed change them.
    package let keys: [Curve25519.Signing.PublicKey]
    /// `--signatures-required`: valid signatures from distinct trusted keys a table needs.
    package let required: Int

    package init(keys: [Curve25519.Signing.PublicKey], required: Int = 1) {
        self.keys = keys
        self.required = max(1, required)
    }

    package init(key: Curve25519.Signing.PublicKey) {
        self.init(keys: [key])
    }

    package init(publicKeyFiles paths: [String], required: Int = 1) throws(CenariusError) {
        var keys: [Curve25519.Signing.PublicKey] = []
        for path in paths { keys.append(try SigningKeys.readPublic(path)) }
        guard !keys.isEmpty else { throw .usage("no public key given") }
        let distinct = Set(keys.map(TableSignature.keyID)).count
        guard required <= distinct else {
            throw .usage("--signatures-required \(required) needs at least \(required) distinct public keys, \(distinct) given")
        }
        self.init(keys: keys, required: required)
    }

    package init(publicKeyFile path: String) throws(CenariusError) {
        try self.init(publicKeyFiles: [path])
    }

    package var keyID: String { keys.first.map(TableSignature.keyID) ?? "" }

    /// What a verified sidecar says, and the device's trust after the rotations it carried.
    package struct Verified: Sendable {
        package var version: Int64
        package var signedAt: Int64?
        package var expires: Int64?
        /// The exact sidecar bytes verified: what `seed` writes into the preset.
        package var sidecar: [UInt8]
        package var trust: TrustState
        /// Ids of the trusted keys whose signatures counted.
        package var signers: [String]
    }

    /// Whether a verified sidecar also vouches for `index` as the release index of `table` with as
    /// many trusted keys as the table itself needs: the keys trusted after the sidecar's rotations,
    /// `--signatures-required` of them. An index one key short is not used (plain files are).
    package func covers(index: [UInt8], table: [UInt8], in verified: Verified) -> Bool {
        guard let signature = try? TableSignature.parse(verified.sidecar, source: "the signature") else { return false }
        // A head's signature is over the index itself: verified with the table, by as many keys.
        if signature.covers[ReleaseHead.indexRole] == TableSignature.digest(index) { return true }
        let trusted = TrustedKeys(configured: keys, state: verified.trust).keys
        return signature.formsSigners(index: index, table: table, among: trusted) >= required
    }

    /// What a device holds when it judges a signature.
    package struct Standing: Sendable {
        /// The signed version of the table in force, below which nothing is taken.
        package var inForce: Int64?
        /// The keys its rotations trust and retired.
        package var trust: TrustState
        /// Its clock (unix seconds), against which expiry is checked.
        package var now: Double

        package init(inForce: Int64?, trust: TrustState, now: Double) {
            self.inForce = inForce
            self.trust = trust
            self.now = now
        }
    }

    /// Checks `sidecar` against `files` (by role: `table`, `release`, ...). Pure: no network, no
    /// file system. `source` names the signed document and `sidecarSource` the signature in errors.
    package func check(sidecar bytes: [UInt8], files: [String: [UInt8]], source: String, sidecarSource: String,
                       standing: Standing) throws(CenariusError) -> Verified {
        let (inForce, trust, now) = (standing.inForce, standing.trust, standing.now)
        let signature = try TableSignature.parse(bytes, source: sidecarSource).bound(to: files, source: source)
        var trusted = TrustedKeys(configured: keys, state: trust)
        let unknown = try trusted.follow(signature.rotations, source: sidecarSource)
        let signers = signature.signers(among: trusted.keys)
        if signers.count < required {
            if let (number, rotation) = unknown.first {
                throw .integrity("rotation \(number) in \(sidecarSource) (key \(rotation.fromID) to \(rotation.toID)) is not signed by a key this device trusts (refused)")
            }
            if required == 1 {
                let expected = trusted.ids.joined(separator: " or ")
                let retired = trusted.state.retired.contains(signature.keyID) ? ", which this device retired in a key rotation" : ""
                let other = signature.signatures.contains { trusted.ids.contains($0.keyID) } ? "" : " (signed with key \(signature.keyID)\(retired), expected \(expected))"
                throw .integrity("bad signature on \(source)\(other)")
            }
            throw .integrity("\(source) has \(signers.count) valid signature\(signers.count == 1 ? "" : "s") from trusted keys, \(required) required")
        }
        if let inForce, signature.version < inForce {
            throw .integrity("\(source) is signed with version \(signature.version), older than version \(inForce) in force (rollback refused)")
        }
        if let expires = signature.expires, Double(expires) <= now {
            throw .integrity("the signature of \(source) expired at \(UTCTime.text(Double(expires))) (a frozen or replayed table is refused; the publisher must sign it again)")
        }
        return Verified(version: signature.version, signedAt: signature.signedAt, expires: signature.expires, sidecar: bytes,
                        trust: trusted.state, signers: signers.map(TableSignature.keyID))
    }
}
