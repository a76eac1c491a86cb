import RouteSync

/// `routes --sign-key`: the sidecar (G8, docs/signing.md).
extension RoutesCommand {
    /// Writes (or adds signatures to) the sidecar at `path` over the table and manifest bytes, and
    /// over the release index (`--compress`) when there is one; every key in `keys` signs.
    func sign(table: [UInt8], manifest: [UInt8]?, index: [UInt8]? = nil, sidecar path: String, keys keyPaths: [String], quiet: Bool) throws(CenariusError) {
        let keys = try keyPaths.map { path throws(CenariusError) in try SigningKeys.readPrivate(path) }
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let rotations = try Self.rotations(rotation, endingAtOneOf: keys.map { TableSignature.keyID(of: $0) })
        let previous = try? TableSignature.parse(FileSystem.readFile(path, limit: 64 << 10), source: path)
        var signature: TableSignature
        // A new version, an expiry or a new rotation is a new release whatever the bytes.
        let asksNew = tableVersion != nil || expires != nil || !(rotations.isEmpty || rotations == previous?.rotations)
        if let previous, !asksNew, let same = previous.coSignable(by: keys, over: files, source: path) {
            // The exact bytes the sidecar's signatures are over, and nothing new asked: another
            // signer's signature on the same version (thresholds), not a new release.
            signature = same
            if let expires = same.expires, Double(expires) <= FileSystem.now() {
                Output.warn("\(path) expired at \(UTCTime.text(Double(expires))); devices refuse it with any number of signatures (pass --expires to sign a new version)")
            }
        } else {
            // Anything else is a new release: a new version, and none of the old signatures.
            if let previous, !previous.namesTable, !asksNew, (try? previous.bound(to: files, source: path)) != nil {
                Output.warn("\(path) names no table digest (written before it did) and none of the --sign-key keys signed it, so it may be over other bytes: signing a new version")
            }
            let now = FileSystem.now()
            let lifetime = expires.flatMap(Self.seconds)
            let version: Int64
            if let tableVersion { version = tableVersion } else { version = try Self.nextVersion(after: previous?.version, now: now) }
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
        try FileSystem.writeAtomically(signature.serialized(), to: path)
        guard !quiet else { return }
        var notes = ["version \(signature.version)", "key\(keys.count == 1 ? "" : "s") " + keys.map { TableSignature.keyID(of: $0) }.joined(separator: ", ")]
        if signature.signatures.count > 1 { notes.append("\(signature.signatures.count) signatures") }
        if manifest != nil { notes.append("covering the release manifest") }
        if index != nil { notes.append("covering the release index") }
        if let expires = signature.expires { notes.append("expires \(UTCTime.text(Double(expires)))") }
        if !signature.rotations.isEmpty { notes.append("\(signature.rotations.count) key rotation\(signature.rotations.count == 1 ? "" : "s")") }
        if !signature.isFirstFormat { notes.append("format \(TableSignature.multiFormat): devices before it refuse it") }
        Output.line("signed \(path): " + notes.joined(separator: ", "))
    }

    /// The default signed version: now in milliseconds, and always above the previous sidecar's,
    /// so two publishers that share no files, and one signing twice in a row, both grow (G8).
    static func nextVersion(after previous: Int64?, now: Double) throws(CenariusError) -> Int64 {
        let milliseconds = Int64((now * 1000).rounded(.down))
        // A sidecar's version is the origin's number: at Int64.max no later version exists.
        let (next, overflow) = (previous ?? 0).addingReportingOverflow(1)
        guard !overflow else { throw .usage("the previous sidecar holds version \(Int64.max), the largest there is: pass --table-version or remove it") }
        return max(milliseconds, next)
    }

    /// `fleet --halt-above`: the same table under a changed manifest, signed anew by `keys` with a new
    /// version, keeping the previous sidecar's rotations and its lifetime (expiry − signing time) from now,
    /// so that a halt never drops a rotation a fleet still follows or an expiry it relies on; the
    /// release index the previous sidecar vouched for (`root`'s `_cenarius/index/`) is vouched for
    /// again under the new version, so that devices keep their patches.
    static func resign(table: [UInt8], manifest: [UInt8]?, sidecar path: String, keys: [String], root: String) throws(CenariusError) {
        let previous = try? TableSignature.parse(FileSystem.readFile(path, limit: 64 << 10), source: path)
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let now = FileSystem.now()
        // The previous sidecar's times are the origin's numbers: its lifetime is checked like one.
        let lifetime = previous.flatMap { previous in previous.expires.flatMap { expires in previous.signedAt.map { expires.subtractingReportingOverflow($0) } } }
        let expires = lifetime.map { Int64(now).addingReportingOverflow($0.partialValue) }
        if lifetime?.overflow == true || expires?.overflow == true {
            throw .usage("\(path) holds signing and expiry times whose lifetime cannot be carried over; sign it anew with routes --expires")
        }
        let version = try nextVersion(after: previous?.version, now: now)
        var signature = try TableSignature.unsigned(
            covering: files, version: version, signedAt: lifetime == nil ? nil : Int64(now),
            expires: expires?.partialValue, rotations: previous?.rotations ?? [])
        let privateKeys = try keys.map { key throws(CenariusError) in try SigningKeys.readPrivate(key) }
        for key in privateKeys { try signature.sign(with: key) }
        if let forms = previous?.forms {
            let indexPath = FileSystem.join(root, ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(table)))
            if let index = try? FileSystem.readFile(indexPath, limit: 32 << 20), TableSignature.digest(index) == forms.index {
                for key in privateKeys { try signature.signForms(index: index, table: table, with: key) }
            }
        }
        try FileSystem.writeAtomically(signature.serialized(), to: path)
    }

    /// The statements of `--rotation`, checked as a chain that ends at the signing key, so that a
    /// mistake shows here and not as a fleet refusing the release.
    static func rotations(_ paths: [String], endingAtOneOf keyIDs: [String]) throws(CenariusError) -> [KeyRotation] {
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
        if let last = chain.last, !keyIDs.contains(last.toID) {
            throw .usage("the last --rotation rotates to key \(last.toID), but --sign-key is key \(keyIDs.joined(separator: ", "))")
        }
        return chain
    }

    /// `90s`, `30m`, `12h`, `7d`, `2w` (or plain seconds) as seconds; nil when it is not one.
    static func seconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits), value > 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow || product > 100 * 365 * 86400 ? nil : product
    }
}
