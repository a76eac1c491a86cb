package import Crypto

/// The `Routes.json.sig` sidecar (G8): an Ed25519 signature over the exact table bytes and a
/// version that must only ever grow (anti-rollback).
///
///     {"format": "cenarius-sig-1", "version": 1732300000, "key": "<key id>", "signature": "<base64>"}
///
/// The signed message is `cenarius-sig-1\n<version>\n<sha256 hex of the table bytes>`. The table
/// itself is unchanged, so clients that know nothing of signatures keep working.
///
/// With a release manifest beside the table (G10), the sidecar also names the manifest's SHA-256
/// (`"release": "<hex>"`) and the message gains a fourth line with it: one signature covers both
/// exact byte strings, so a manifest cannot be added, dropped or edited (to halt a rollout, or to
/// skip one) without the key.
///
/// With a release index beside the table (B8, `routes --compress`), the sidecar also names the
/// index's SHA-256 (`"forms": "<hex>"`) with a second signature (`"formsSignature"`) over
/// `cenarius-forms-1\n<version>\n<table sha256>\n<index sha256>`: a device with a key uses an
/// index only when that signature holds, and verifiers that know nothing of it ignore both keys.
package struct TableSignature: Sendable, Equatable {
    package static let format = "cenarius-sig-1"

    package var version: Int64
    /// First 16 hex digits of SHA-256 of the public key: names the key, so a rotation is diagnosable.
    package var keyID: String
    package var signature: [UInt8]
    /// SHA-256 hex of the release manifest the signature covers, if any.
    package var manifest: String?
    /// SHA-256 hex of the release index (B8) and the signature over it, if the publisher wrote one.
    package var forms: String?
    package var formsSignature: [UInt8]?

    package init(version: Int64, keyID: String, signature: [UInt8], manifest: String? = nil, forms: String? = nil, formsSignature: [UInt8]? = nil) {
        self.version = version
        self.keyID = keyID
        self.signature = signature
        self.manifest = manifest
        self.forms = forms
        self.formsSignature = formsSignature
    }

    package static let formsFormat = "cenarius-forms-1"

    package static func formsMessage(table: [UInt8], version: Int64, forms: String) -> [UInt8] {
        Array("\(formsFormat)\n\(version)\n\(StreamingHasher.hex(SHA256.hash(data: table)))\n\(forms)".utf8)
    }

    /// Whether `index` is the release index this signature covers for `table` (checked after the
    /// table's own signature: a device with a key trusts no other index).
    package func covers(index: [UInt8], table: [UInt8], with key: Curve25519.Signing.PublicKey) -> Bool {
        guard let forms, let formsSignature, forms == TableSignature.manifestDigest(index) else { return false }
        return key.isValidSignature(formsSignature, for: TableSignature.formsMessage(table: table, version: version, forms: forms))
    }

    package static func message(table: [UInt8], version: Int64, manifest: String? = nil) -> [UInt8] {
        let base = "\(format)\n\(version)\n\(StreamingHasher.hex(SHA256.hash(data: table)))"
        return Array((manifest.map { base + "\n" + $0 } ?? base).utf8)
    }

    package static func manifestDigest(_ bytes: [UInt8]) -> String { StreamingHasher.hex(SHA256.hash(data: bytes)) }

    package static func keyID(of publicKey: Curve25519.Signing.PublicKey) -> String {
        String(StreamingHasher.hex(SHA256.hash(data: publicKey.rawRepresentation)).prefix(16))
    }

    package static func sign(table: [UInt8], manifest: [UInt8]? = nil, forms index: [UInt8]? = nil, version: Int64,
                             with key: Curve25519.Signing.PrivateKey) throws(CenariusError) -> TableSignature {
        let digest = manifest.map(manifestDigest)
        let forms = index.map(manifestDigest)
        do {
            let signature = try key.signature(for: message(table: table, version: version, manifest: digest))
            let formsSignature = try forms.map { try Array(key.signature(for: formsMessage(table: table, version: version, forms: $0))) }
            return TableSignature(version: version, keyID: keyID(of: key.publicKey), signature: Array(signature), manifest: digest,
                                  forms: forms, formsSignature: formsSignature)
        } catch {
            throw .internal("cannot sign the table: \(error)")
        }
    }

    /// Checks the signature over `table` and, when the remote has one, its release `manifest`; a
    /// bad one is an integrity error (exit 4).
    package func verify(table: [UInt8], manifest manifestBytes: [UInt8]? = nil, with key: Curve25519.Signing.PublicKey, source: String) throws(CenariusError) {
        switch (manifestBytes.map(TableSignature.manifestDigest), manifest) {
        case (nil, nil):
            break
        case (let found?, let signed?) where found == signed:
            break
        case (_?, nil):
            throw .integrity("the release manifest beside \(source) is not covered by its signature")
        case (nil, _?):
            throw .integrity("the signature of \(source) covers a release manifest the remote does not have")
        case (_?, _?):
            throw .integrity("the release manifest beside \(source) does not match its signature")
        }
        guard key.isValidSignature(signature, for: TableSignature.message(table: table, version: version, manifest: manifest)) else {
            let other = keyID != TableSignature.keyID(of: key) ? " (signed with key \(keyID), expected \(TableSignature.keyID(of: key)))" : ""
            throw .integrity("bad signature on \(source)\(other)")
        }
    }

    package func serialized() -> [UInt8] {
        let release = manifest.map { ", \"release\": \"\($0)\"" } ?? ""
        var forms = ""
        if let digest = self.forms, let formsSignature {
            forms = ", \"forms\": \"\(digest)\", \"formsSignature\": \"\(Base64.encode(formsSignature))\""
        }
        return Array("{\"format\": \"\(TableSignature.format)\", \"version\": \(version), \"key\": \"\(keyID)\"\(release), \"signature\": \"\(Base64.encode(signature))\"\(forms)}\n".utf8)
    }

    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> TableSignature {
        var format: String?
        var version: Int64?
        var key = ""
        var signature: String?
        var manifest: String?
        var forms: String?
        var formsSignature: String?
        let failure: JSONScanner.Failure? = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(JSONScanner.Failure) {
                try scanner.object { s, name throws(JSONScanner.Failure) in
                    switch name {
                    case "format": format = try s.string()
                    case "version": version = try s.integer()
                    case "key": key = try s.string()
                    case "signature": signature = try s.string()
                    case "release": manifest = try s.string()
                    case "forms": forms = try s.string()
                    case "formsSignature": formsSignature = try s.string()
                    default: try s.skipValue()
                    }
                }
                scanner.skipWhitespace()
                if !scanner.atEnd { throw scanner.fail("trailing data") }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw .integrity("invalid signature file \(source): \(failure.reason) at byte \(failure.offset)") }
        guard format == TableSignature.format else { throw .integrity("signature file \(source) has format \(format ?? "none"), expected \(TableSignature.format)") }
        guard let version, let signature, let raw = Base64.decode(signature), raw.count == 64 else {
            throw .integrity("signature file \(source) lacks a version or a 64-byte base64 signature")
        }
        if let manifest, manifest.utf8.count != 64 || ContentHash(hex: manifest) == nil {
            throw .integrity("signature file \(source) names a release manifest digest that is not SHA-256 hex")
        }
        // A forms signature that does not parse only costs the device its index: the table stands.
        let formsRaw = formsSignature.flatMap(Base64.decode).flatMap { $0.count == 64 ? $0 : nil }
        return TableSignature(version: version, keyID: key, signature: raw, manifest: manifest?.lowercased(),
                              forms: formsRaw == nil ? nil : forms?.lowercased(), formsSignature: formsRaw)
    }
}

/// Ed25519 key files: one line of base64 (raw 32-byte keys), private keys written 0600.
package enum SigningKeys {
    package static func generate() -> (private: Curve25519.Signing.PrivateKey, public: Curve25519.Signing.PublicKey) {
        let key = Curve25519.Signing.PrivateKey()
        return (key, key.publicKey)
    }

    package static func encode(_ raw: some Sequence<UInt8>) -> [UInt8] { Array((Base64.encode(Array(raw)) + "\n").utf8) }

    /// The key files' contents of a new pair: private, public.
    package static func encoded(_ pair: (private: Curve25519.Signing.PrivateKey, public: Curve25519.Signing.PublicKey)) -> (private: [UInt8], public: [UInt8]) {
        (encode(pair.private.rawRepresentation), encode(pair.public.rawRepresentation))
    }

    package static func readPrivate(_ path: String) throws(CenariusError) -> Curve25519.Signing.PrivateKey {
        let raw = try readKey(path, kind: "private")
        do { return try Curve25519.Signing.PrivateKey(rawRepresentation: raw) } catch {
            throw .usage("\(path) is not an Ed25519 private key")
        }
    }

    package static func readPublic(_ path: String) throws(CenariusError) -> Curve25519.Signing.PublicKey {
        let raw = try readKey(path, kind: "public")
        do { return try Curve25519.Signing.PublicKey(rawRepresentation: raw) } catch {
            throw .usage("\(path) is not an Ed25519 public key")
        }
    }

    private static func readKey(_ path: String, kind: String) throws(CenariusError) -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readFile(path, limit: 4096) } catch { throw .usage("cannot read \(kind) key \(path): \(error.message)") }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        guard let raw = Base64.decode(text), raw.count == 32 else { throw .usage("\(path) is not a base64 Ed25519 \(kind) key") }
        return raw
    }
}

/// Standard base64 (RFC 4648) without Foundation.
package enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 15) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") { padding += 1; continue }
            guard padding == 0, let index = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(index))
        }
        guard (values.count + padding) % 4 == 0, padding <= 2 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i + 1 < values.count {
            out.append(values[i] << 2 | values[i + 1] >> 4)
            if i + 2 < values.count { out.append(values[i + 1] << 4 | values[i + 2] >> 2) }
            if i + 3 < values.count { out.append(values[i + 2] << 6 | values[i + 3]) }
            i += 4
        }
        return out
    }
}
