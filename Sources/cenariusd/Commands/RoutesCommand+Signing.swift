import RouteSync

/// `routes --sign-key`: the sidecar (G8, docs/signing.md).
extension RoutesCommand {
    /// Writes (or adds a signature to) the sidecar at `path` over the table and manifest bytes.
    func sign(table: [UInt8], manifest: [UInt8]?, sidecar path: String, key keyPath: String) throws(CenariusError) {
        let key = try SigningKeys.readPrivate(keyPath)
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let rotations = try Self.rotations(rotation, endingAt: TableSignature.keyID(of: key))
        let previous = try? TableSignature.parse(FileSystem.readFile(path, limit: 64 << 10), source: path)
        var signature: TableSignature
        // The same files under a sidecar that asks for nothing new: another signer's signature on
        // the same version (thresholds), not a new release.
        if let previous, tableVersion == nil, expires == nil, rotations.isEmpty || rotations == previous.rotations,
           let same = try? previous.bound(to: files, source: path) {
            signature = same
            if let expires = same.expires, Double(expires) <= FileSystem.now() {
                Output.warn("\(path) expired at \(UTCTime.text(Double(expires))); devices refuse it with any number of signatures (pass --expires to sign a new version)")
            }
        } else {
            let now = FileSystem.now()
            let lifetime = expires.flatMap(Self.seconds)
            signature = try TableSignature.unsigned(
                covering: files, version: tableVersion ?? Self.nextVersion(after: previous, now: now),
                signedAt: lifetime == nil ? nil : Int64(now), expires: lifetime.map { Int64(now) + $0 }, rotations: rotations)
        }
        try signature.sign(with: key)
        try FileSystem.writeAtomically(signature.serialized(), to: path)
        guard !json else { return }
        var notes = ["version \(signature.version)", "key \(TableSignature.keyID(of: key))"]
        if signature.signatures.count > 1 { notes.append("\(signature.signatures.count) signatures") }
        if manifest != nil { notes.append("covering the release manifest") }
        if let expires = signature.expires { notes.append("expires \(UTCTime.text(Double(expires)))") }
        if !signature.rotations.isEmpty { notes.append("\(signature.rotations.count) key rotation\(signature.rotations.count == 1 ? "" : "s")") }
        if !signature.isFirstFormat { notes.append("format \(TableSignature.multiFormat): devices before it refuse it") }
        Output.line("signed \(path): " + notes.joined(separator: ", "))
    }

    /// The default signed version: now in milliseconds, and always above the previous sidecar's,
    /// so two publishers that share no files, and one signing twice in a row, both grow (G8).
    static func nextVersion(after previous: TableSignature?, now: Double) -> Int64 {
        let milliseconds = Int64((now * 1000).rounded(.down))
        return max(milliseconds, (previous?.version ?? 0) + 1)
    }

    /// `fleet --halt-above`: the same table under a changed manifest, signed anew by `keys` with a new
    /// version, keeping the previous sidecar's rotations and its lifetime (expiry − signing time) from now,
    /// so that a halt never drops a rotation a fleet still follows or an expiry it relies on.
    static func resign(table: [UInt8], manifest: [UInt8]?, sidecar path: String, keys: [String]) throws(CenariusError) {
        let previous = try? TableSignature.parse(FileSystem.readFile(path, limit: 64 << 10), source: path)
        var files = [TableSignature.tableRole: table]
        files[TableSignature.releaseRole] = manifest
        let now = FileSystem.now()
        let lifetime = previous.flatMap { previous in previous.expires.flatMap { expires in previous.signedAt.map { expires - $0 } } }
        var signature = try TableSignature.unsigned(
            covering: files, version: nextVersion(after: previous, now: now), signedAt: lifetime == nil ? nil : Int64(now),
            expires: lifetime.map { Int64(now) + $0 }, rotations: previous?.rotations ?? [])
        for key in keys { try signature.sign(with: SigningKeys.readPrivate(key)) }
        try FileSystem.writeAtomically(signature.serialized(), to: path)
    }

    /// The statements of `--rotation`, checked as a chain that ends at the signing key, so that a
    /// mistake shows here and not as a fleet refusing the release.
    static func rotations(_ paths: [String], endingAt keyID: String) throws(CenariusError) -> [KeyRotation] {
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
        if let last = chain.last, last.toID != keyID {
            throw .usage("the last --rotation rotates to key \(last.toID), but --sign-key is key \(keyID)")
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
