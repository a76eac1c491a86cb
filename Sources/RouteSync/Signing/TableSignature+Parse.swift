/// Reading a sidecar: a pure function of the bytes (the fuzzers' entry point). Its members are
/// scanned first, whatever the format; the format then says which of them make the signature.
extension TableSignature {
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> TableSignature {
        var scanned = Scanned()
        let failure = JSONScanner.scanDocument(bytes) { scanner throws(JSONScanner.Failure) in
            try scanner.object { s, name throws(JSONScanner.Failure) in try scanned.read(name, from: &s) }
        }
        if let failure { throw .integrity("invalid signature file \(source): \(failure.reason) at byte \(failure.offset)") }
        var parsed: TableSignature
        switch scanned.format {
        case Self.format?: parsed = try scanned.firstFormat(source: source)
        case Self.multiFormat?: parsed = try scanned.multiFormat(source: source)
        default:
            throw .integrity("signature file \(source) has format \(scanned.format ?? "none"), expected \(Self.format) or \(Self.multiFormat)")
        }
        parsed.forms = scanned.forms
        return parsed
    }

    /// The sidecar's members as they were written, before any is checked.
    private struct Scanned {
        var format: String?
        var version: Int64?
        var signedAt: Int64?
        var expires: Int64?
        var key = ""
        var signature: String?
        var manifest: String?
        var table: String?
        var covers: [String: String] = [:]
        var entries: [(key: String, signature: String)] = []
        var rotations: [KeyRotation.Fields] = []
        var forms: FormsCover?

        mutating func read(_ name: String, from s: inout JSONScanner) throws(JSONScanner.Failure) {
            switch name {
            case "format": format = try s.string()
            case "version": version = try s.integer()
            case "signed": signedAt = try s.integer()
            case "expires": expires = try s.integer()
            case "key": key = try s.string()
            case "signature": signature = try s.string()
            case "release": manifest = try s.string()
            case "table": table = try s.string()
            case "covers": try s.object { s, role throws(JSONScanner.Failure) in covers[role] = try s.string() }
            case "signatures": try s.array { s throws(JSONScanner.Failure) in entries.append(try Self.entry(&s)) }
            case "rotations": try s.array { s throws(JSONScanner.Failure) in rotations.append(try KeyRotation.scan(&s)) }
            case "forms": forms = try FormsCover.scan(&s)
            default: try s.skipValue()
            }
        }

        private static func entry(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> (key: String, signature: String) {
            var entry = (key: "", signature: "")
            try s.object { s, name throws(JSONScanner.Failure) in
                switch name {
                case "key": entry.key = try s.string()
                case "signature": entry.signature = try s.string()
                default: try s.skipValue()
                }
            }
            return entry
        }

        /// `cenarius-sig-1`: one key, one signature, the table and the release manifest.
        func firstFormat(source: String) throws(CenariusError) -> TableSignature {
            guard let version, let signature else { throw .integrity("signature file \(source) lacks a version or a 64-byte base64 signature") }
            // A first-format sidecar written before `table` was added names no table digest: the
            // message is then built from the device's table.
            var covered = [tableRole: try table.map { (t) throws(CenariusError) in try Self.hex(t, "table", source: source) } ?? deviceTable]
            covered[releaseRole] = try manifest.map { (m) throws(CenariusError) in try Self.hex(m, "release manifest", source: source) }
            return TableSignature(version: version, covers: covered, signatures: [Entry(keyID: key, signature: try Self.raw(signature, source: source))])
        }

        /// The multi-signature format: what it covers by role, its signatures, its rotations.
        func multiFormat(source: String) throws(CenariusError) -> TableSignature {
            guard let version, !entries.isEmpty else { throw .integrity("signature file \(source) lacks a version or a signature") }
            guard covers[tableRole] != nil else { throw .integrity("signature file \(source) does not cover the table") }
            // Each signature and statement costs a verification: a sidecar cannot make a device spin.
            guard entries.count <= maxEntries, rotations.count <= maxEntries, covers.count <= maxEntries else {
                throw .integrity("signature file \(source) holds more than \(maxEntries) signatures, rotations or covered files")
            }
            var checked: [String: String] = [:]
            for (role, digest) in covers {
                guard isRole(role) else { throw .integrity("signature file \(source) covers a file with the bad role name \(JSONText.quoted(role))") }
                checked[role] = try Self.hex(digest, role, source: source)
            }
            var signatures: [Entry] = []
            for entry in entries { signatures.append(Entry(keyID: entry.key, signature: try Self.raw(entry.signature, source: source))) }
            var statements: [KeyRotation] = []
            for (n, fields) in rotations.enumerated() { statements.append(try KeyRotation(fields, source: "\(source) (rotation \(n + 1))")) }
            return TableSignature(version: version, signedAt: signedAt, expires: expires, covers: checked, signatures: signatures, rotations: statements)
        }

        private static func hex(_ digest: String, _ what: String, source: String) throws(CenariusError) -> String {
            guard digest.utf8.count == 64, ContentHash(hex: digest) != nil else {
                throw .integrity("signature file \(source) names a \(what) digest that is not SHA-256 hex")
            }
            return digest.lowercased()
        }

        private static func raw(_ text: String, source: String) throws(CenariusError) -> [UInt8] {
            guard let raw = Base64.decode(text), raw.count == 64 else {
                throw .integrity("signature file \(source) lacks a version or a 64-byte base64 signature")
            }
            return raw
        }
    }
}
