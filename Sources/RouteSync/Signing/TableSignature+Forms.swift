package import Crypto

/// The part of the sidecar that covers the release index (B8, docs/release-bytes.md):
///
///     "forms": {"index": "<SHA-256 of the index>", "signatures": [{"key": "<id>", "signature": "<base64>"}]}
///
/// each signature over `cenarius-forms-1\n<version>\n<SHA-256 of the table>\n<SHA-256 of the index>`.
/// It is a key of its own, outside the signed message of the table: devices that know nothing of
/// it skip it, and a sidecar that would otherwise be in the first format stays in it. A device
/// with keys configured uses an index only when one of these signatures is valid.
extension TableSignature {
    package struct FormsCover: Sendable, Equatable {
        package var index: String
        package var signatures: [Entry]

        static func scan(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> FormsCover {
            var cover = FormsCover(index: "", signatures: [])
            try s.object { s, name throws(JSONScanner.Failure) in
                switch name {
                case "index": cover.index = try s.string().lowercased()
                case "signatures":
                    try s.array { s throws(JSONScanner.Failure) in
                        var key = "", signature = ""
                        try s.object { s, field throws(JSONScanner.Failure) in
                            switch field {
                            case "key": key = try s.string()
                            case "signature": signature = try s.string()
                            default: try s.skipValue()
                            }
                        }
                        // A malformed signature here only costs the device the index.
                        if cover.signatures.count < maxEntries, let raw = Base64.decode(signature), raw.count == 64 {
                            cover.signatures.append(Entry(keyID: key, signature: raw))
                        }
                    }
                default: try s.skipValue()
                }
            }
            return cover
        }
    }

    package static let formsFormat = "cenarius-forms-1"

    static func formsMessage(table: [UInt8], version: Int64, index: String) -> [UInt8] {
        Array("\(formsFormat)\n\(version)\n\(digest(table))\n\(index)".utf8)
    }

    /// Adds `key`'s signature over `index` for `table` (a different index starts the part afresh).
    package mutating func signForms(index: [UInt8], table: [UInt8], with key: Curve25519.Signing.PrivateKey) throws(CenariusError) {
        let indexDigest = Self.digest(index)
        if forms?.index != indexDigest { forms = FormsCover(index: indexDigest, signatures: []) }
        let id = Self.keyID(of: key.publicKey)
        do {
            let signature = try key.signature(for: Self.formsMessage(table: table, version: version, index: indexDigest))
            forms!.signatures.removeAll { $0.keyID == id }
            forms!.signatures.append(Entry(keyID: id, signature: Array(signature)))
        } catch {
            throw .internal("cannot sign the release index: \(error)")
        }
    }

    /// How many of `keys` vouch, in this sidecar, for `index` as the release index of `table`.
    package func formsSigners(index: [UInt8], table: [UInt8], among keys: [Curve25519.Signing.PublicKey]) -> Int {
        guard let forms, forms.index == Self.digest(index) else { return 0 }
        let message = Self.formsMessage(table: table, version: version, index: forms.index)
        return keys.count { key in forms.signatures.contains { key.isValidSignature($0.signature, for: message) } }
    }

    var formsJSON: String {
        guard let forms, !forms.signatures.isEmpty else { return "" }
        let entries = forms.signatures.map { "{\"key\": \"\($0.keyID)\", \"signature\": \"\(Base64.encode($0.signature))\"}" }
        return ", \"forms\": {\"index\": \"\(forms.index)\", \"signatures\": [\(entries.joined(separator: ", "))]}"
    }
}
