/// The sidecar's JSON (docs/signing.md). `parse` is a pure function of the bytes (the fuzzers' entry
/// point); `serialized` writes the first format whenever it can say everything, so that devices on
/// older code keep verifying what a newer `routes` writes.
extension TableSignature {
    static let maxEntries = 64

    /// Whether older devices (which know only `cenarius-sig-1`) can read this sidecar.
    package var isFirstFormat: Bool { fitsFirstFormat && signatures.count == 1 && rotations.isEmpty }

    package func serialized() -> [UInt8] {
        if isFirstFormat {
            // The texts of a parsed sidecar are the origin's: quoted, so that it writes back as it read.
            // `table` names the digest the message holds: older devices skip it (unknown keys are
            // ignored), and `routes` can tell a co-signature from a new release by it.
            let table = covers[Self.tableRole].flatMap { $0 == Self.deviceTable ? nil : ", \"table\": \(JSONText.quoted($0))" } ?? ""
            let release = manifest.map { ", \"release\": \(JSONText.quoted($0))" } ?? ""
            return Array("{\"format\": \"\(Self.format)\", \"version\": \(version), \"key\": \(JSONText.quoted(keyID))\(table)\(release), \"signature\": \"\(Base64.encode(signatures[0].signature))\"\(formsJSON)}\n".utf8)
        }
        var fields = ["\"format\": \"\(Self.multiFormat)\"", "\"version\": \(version)"]
        if let signedAt { fields.append("\"signed\": \(signedAt)") }
        if let expires { fields.append("\"expires\": \(expires)") }
        let covered = covers.keys.sorted().map { "\(JSONText.quoted($0)): \(JSONText.quoted(covers[$0]!))" }.joined(separator: ", ")
        fields.append("\"covers\": {\(covered)}")
        let entries = signatures.map { "{\"key\": \(JSONText.quoted($0.keyID)), \"signature\": \"\(Base64.encode($0.signature))\"}" }
        fields.append("\"signatures\": [\(entries.joined(separator: ", "))]")
        if !rotations.isEmpty {
            fields.append("\"rotations\": [\(rotations.map { $0.json }.joined(separator: ", "))]")
        }
        return Array(("{" + fields.joined(separator: ", ") + formsJSON + "}\n").utf8)
    }

    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> TableSignature {
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
        let failure = JSONScanner.scanDocument(bytes) { scanner throws(JSONScanner.Failure) in
            try scanner.object { s, name throws(JSONScanner.Failure) in
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
                case "signatures":
                    try s.array { s throws(JSONScanner.Failure) in
                        var entry = (key: "", signature: "")
                        try s.object { s, name throws(JSONScanner.Failure) in
                            switch name {
                            case "key": entry.key = try s.string()
                            case "signature": entry.signature = try s.string()
                            default: try s.skipValue()
                            }
                        }
                        entries.append(entry)
                    }
                case "rotations": try s.array { s throws(JSONScanner.Failure) in rotations.append(try KeyRotation.scan(&s)) }
                case "forms": forms = try FormsCover.scan(&s)
                default: try s.skipValue()
                }
            }
        }
        if let failure { throw .integrity("invalid signature file \(source): \(failure.reason) at byte \(failure.offset)") }
        func hex(_ digest: String, _ what: String) throws(CenariusError) -> String {
            guard digest.utf8.count == 64, ContentHash(hex: digest) != nil else {
                throw .integrity("signature file \(source) names a \(what) digest that is not SHA-256 hex")
            }
            return digest.lowercased()
        }
        func raw(_ text: String) throws(CenariusError) -> [UInt8] {
            guard let raw = Base64.decode(text), raw.count == 64 else {
                throw .integrity("signature file \(source) lacks a version or a 64-byte base64 signature")
            }
            return raw
        }
        switch format {
        case Self.format?:
            guard let version, let signature else { throw .integrity("signature file \(source) lacks a version or a 64-byte base64 signature") }
            // A first-format sidecar written before `table` was added names no table digest: the
            // message is then built from the device's table.
            var covered = [tableRole: try table.map { (t) throws(CenariusError) in try hex(t, "table") } ?? Self.deviceTable]
            covered[releaseRole] = try manifest.map { (m) throws(CenariusError) in try hex(m, "release manifest") }
            var parsed = TableSignature(version: version, covers: covered, signatures: [Entry(keyID: key, signature: try raw(signature))])
            parsed.forms = forms
            return parsed
        case Self.multiFormat?:
            guard let version, !entries.isEmpty else { throw .integrity("signature file \(source) lacks a version or a signature") }
            guard covers[tableRole] != nil else { throw .integrity("signature file \(source) does not cover the table") }
            // Each signature and statement costs a verification: a sidecar cannot make a device spin.
            guard entries.count <= maxEntries, rotations.count <= maxEntries, covers.count <= maxEntries else {
                throw .integrity("signature file \(source) holds more than \(maxEntries) signatures, rotations or covered files")
            }
            var checked: [String: String] = [:]
            for (role, digest) in covers {
                guard isRole(role) else { throw .integrity("signature file \(source) covers a file with the bad role name \(JSONText.quoted(role))") }
                checked[role] = try hex(digest, role)
            }
            var signatures: [Entry] = []
            for entry in entries { signatures.append(Entry(keyID: entry.key, signature: try raw(entry.signature))) }
            var statements: [KeyRotation] = []
            for (n, fields) in rotations.enumerated() { statements.append(try KeyRotation(fields, source: "\(source) (rotation \(n + 1))")) }
            var parsed = TableSignature(version: version, signedAt: signedAt, expires: expires, covers: checked, signatures: signatures, rotations: statements)
            parsed.forms = forms
            return parsed
        default:
            throw .integrity("signature file \(source) has format \(format ?? "none"), expected \(Self.format) or \(Self.multiFormat)")
        }
    }
}
