import Crypto

/// A route table's content hash: lowercase hex, 32 digits for MD5 (Cenarius' own), 64 for SHA-256.
package struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    package enum Algorithm: String, Sendable, CaseIterable {
        case md5, sha256

        package var hexLength: Int { self == .md5 ? 32 : 64 }
    }

    package let hex: String

    package var algorithm: Algorithm { hex.utf8.count == 32 ? .md5 : .sha256 }
    package var description: String { hex }

    /// Accepts either case; stores lowercase so that equal hashes compare equal.
    package init?(hex raw: String) {
        var raw = raw
        let count = raw.utf8.count
        guard count == 32 || count == 64 else { return nil }
        var hasUpper = false
        let valid = raw.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
                case UInt8(ascii: "A")...UInt8(ascii: "F"): hasUpper = true
                default: return false
                }
            }
            return true
        }
        guard valid else { return nil }
        // Tables are almost always lowercase already: keep the string as it is.
        hex = hasUpper ? String(decoding: raw.utf8.map { (0x41...0x46).contains($0) ? $0 + 32 : $0 }, as: UTF8.self) : raw
    }
}

/// Hashes bytes as they stream past, so that nothing has to be read back to be verified (G1).
package struct StreamingHasher: Sendable {
    // Two optionals rather than an enum with payloads: mutating through `?.` updates the
    // digest in place, where re-wrapping an enum payload would copy the context per chunk.
    private var md5: Insecure.MD5?
    private var sha256: SHA256?
    package let algorithm: ContentHash.Algorithm

    package init(_ algorithm: ContentHash.Algorithm) {
        self.algorithm = algorithm
        if algorithm == .md5 { md5 = Insecure.MD5() } else { sha256 = SHA256() }
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        md5?.update(bufferPointer: bytes)
        sha256?.update(bufferPointer: bytes)
    }

    package func finalize() -> ContentHash {
        let hex = md5.map { StreamingHasher.hex($0.finalize()) } ?? StreamingHasher.hex(sha256!.finalize())
        return ContentHash(hex: hex)!
    }

    /// Lower-case hex of a digest (or any bytes): the one spelling every hash in the cache uses.
    /// SHA-256 of `bytes` in lower-case hex: how tables, indexes and sidecars name each other.
    package static func sha256Hex(_ bytes: [UInt8]) -> String { hex(SHA256.hash(data: bytes)) }

    package static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
