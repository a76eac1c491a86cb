package import Crypto

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
