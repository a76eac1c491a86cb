package import Crypto

/// A key rotation statement (`NEW.rotation`, written by `keygen --rotate-from OLD.key`): the old
/// key signs that the new key replaces it. A device that trusts the old key and sees the statement
/// published with a table trusts the new key instead, from then on (docs/signing.md).
///
///     {"format": "cenarius-rotation-1", "from": "<base64 old public key>", "to": "<base64 new public key>", "signature": "<base64>"}
///
/// The signed message is `cenarius-rotation-1\nfrom <from>\nto <to>`, with the two keys as written.
package struct KeyRotation: Sendable, Equatable {
    package static let format = "cenarius-rotation-1"

    /// Raw 32-byte Ed25519 public keys.
    package let from: [UInt8]
    package let to: [UInt8]
    package let signature: [UInt8]

    package var fromKey: Curve25519.Signing.PublicKey? { try? Curve25519.Signing.PublicKey(rawRepresentation: from) }
    package var toKey: Curve25519.Signing.PublicKey? { try? Curve25519.Signing.PublicKey(rawRepresentation: to) }
    package var fromID: String { fromKey.map(TableSignature.keyID) ?? "?" }
    package var toID: String { toKey.map(TableSignature.keyID) ?? "?" }

    static func message(from: [UInt8], to: [UInt8]) -> [UInt8] {
        Array("\(format)\nfrom \(Base64.encode(from))\nto \(Base64.encode(to))".utf8)
    }

    /// The statement that `new` replaces `old`, signed by `old`.
    package static func make(from old: Curve25519.Signing.PrivateKey, to new: Curve25519.Signing.PublicKey) throws(CenariusError) -> KeyRotation {
        let from = Array(old.publicKey.rawRepresentation), to = Array(new.rawRepresentation)
        do {
            return KeyRotation(from: from, to: to, signature: Array(try old.signature(for: message(from: from, to: to))))
        } catch {
            throw .internal("cannot sign the rotation: \(error)")
        }
    }

    private init(from: [UInt8], to: [UInt8], signature: [UInt8]) {
        self.from = from
        self.to = to
        self.signature = signature
    }

    /// Whether the old key signed it.
    package var isSigned: Bool { fromKey?.isValidSignature(signature, for: Self.message(from: from, to: to)) ?? false }

    var json: String {
        "{\"format\": \"\(Self.format)\", \"from\": \"\(Base64.encode(from))\", \"to\": \"\(Base64.encode(to))\", \"signature\": \"\(Base64.encode(signature))\"}"
    }

    package func serialized() -> [UInt8] { Array((json + "\n").utf8) }

    /// A statement file's bytes (pure: no file system).
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> KeyRotation {
        var fields = Fields()
        let failure = JSONScanner.scanDocument(bytes) { scanner throws(JSONScanner.Failure) in fields = try scan(&scanner) }
        if let failure { throw .integrity("invalid rotation statement \(source): \(failure.reason) at byte \(failure.offset)") }
        return try KeyRotation(fields, source: source)
    }

    /// The statement's fields as scanned, before they are checked.
    struct Fields {
        var format = "", from = "", to = "", signature = ""
    }

    static func scan(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> Fields {
        var fields = Fields()
        try scanner.object { s, name throws(JSONScanner.Failure) in
            switch name {
            case "format": fields.format = try s.string()
            case "from": fields.from = try s.string()
            case "to": fields.to = try s.string()
            case "signature": fields.signature = try s.string()
            default: try s.skipValue()
            }
        }
        return fields
    }

    init(_ fields: Fields, source: String) throws(CenariusError) {
        guard fields.format == Self.format else {
            throw .integrity("rotation statement \(source) has format \(fields.format.isEmpty ? "none" : fields.format), expected \(Self.format)")
        }
        guard let from = Base64.decode(fields.from), from.count == 32, let to = Base64.decode(fields.to), to.count == 32,
              let signature = Base64.decode(fields.signature), signature.count == 64 else {
            throw .integrity("rotation statement \(source) lacks a 32-byte from or to key or a 64-byte signature (base64)")
        }
        guard from != to else { throw .integrity("rotation statement \(source) rotates a key to itself") }
        self.init(from: from, to: to, signature: signature)
    }
}
