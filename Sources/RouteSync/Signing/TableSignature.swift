package import Crypto

/// The `Routes.json.sig` sidecar (G8): Ed25519 signatures over the exact bytes of the table and of
/// the files published with it (the release manifest, ...), a version that must only ever grow
/// (anti-rollback), and optionally an expiry (freeze attacks) and key rotation statements.
/// The table itself is unchanged, so clients that know nothing of signatures keep working.
///
/// Each covered file is named by its role (`table`, `release`, ...) and carried as its SHA-256.
/// Two signed messages exist (docs/signing.md):
/// - the first format's, when the sidecar signs nothing the first format could not say (no
///   expiry, only `table` and `release`): `cenarius-sig-1\n<version>\n<table hex>[\n<release hex>]`,
///   so that devices on older code verify what a newer `routes` writes for them;
/// - otherwise `cenarius-sig-2\nversion <v>\nsigned <t>\nexpires <t>\n<role> <hex>...` (roles
///   sorted, the `signed`/`expires` lines only when set).
/// Which container holds them (`format` in the JSON) only says how many signatures and whether
/// rotations come along; every signature in a sidecar signs the same message.
package struct TableSignature: Sendable, Equatable {
    package static let format = "cenarius-sig-1"
    package static let multiFormat = "cenarius-sig-2"
    package static let tableRole = "table"
    package static let releaseRole = "release"

    /// One signer's signature over the message.
    package struct Entry: Sendable, Equatable {
        /// First 16 hex digits of SHA-256 of the public key: names the key, so a rotation is diagnosable.
        package var keyID: String
        package var signature: [UInt8]

        package init(keyID: String, signature: [UInt8]) {
            self.keyID = keyID
            self.signature = signature
        }
    }

    package var version: Int64
    /// Unix seconds when it was signed, and after which no device adopts it (nil: never expires).
    package var signedAt: Int64?
    package var expires: Int64?
    /// SHA-256 hex of each covered file, by role; `table` always.
    package var covers: [String: String]
    package var signatures: [Entry]
    /// Key rotation statements published with the table, oldest first.
    package var rotations: [KeyRotation]
    /// The release index the publisher vouches for (B8), with signatures of its own: a separate
    /// part older devices skip (TableSignature+Forms).
    package var forms: FormsCover?

    package init(version: Int64, signedAt: Int64? = nil, expires: Int64? = nil, covers: [String: String],
                 signatures: [Entry] = [], rotations: [KeyRotation] = []) {
        self.version = version
        self.signedAt = signedAt
        self.expires = expires
        self.covers = covers
        self.signatures = signatures
        self.rotations = rotations
    }

    /// The first signer's key id.
    package var keyID: String { signatures.first?.keyID ?? "" }
    /// SHA-256 hex of the release manifest the signature covers, if any.
    package var manifest: String? { covers[Self.releaseRole] }

    /// Whether the first format's message and container can say all of it.
    var fitsFirstFormat: Bool {
        signedAt == nil && expires == nil && covers[Self.tableRole] != nil
            && covers.keys.allSatisfy { $0 == Self.tableRole || $0 == Self.releaseRole }
    }

    /// The exact bytes every signature of this sidecar signs.
    package var message: [UInt8] {
        if fitsFirstFormat {
            return Array(([Self.format, String(version), covers[Self.tableRole]!] + (manifest.map { [$0] } ?? [])).joined(separator: "\n").utf8)
        }
        var lines = [Self.multiFormat, "version \(version)"]
        if let signedAt { lines.append("signed \(signedAt)") }
        if let expires { lines.append("expires \(expires)") }
        for role in covers.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
            lines.append("\(role) \(covers[role]!)")
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    package static func digest(_ bytes: [UInt8]) -> String { StreamingHasher.sha256Hex(bytes) }
    package static func manifestDigest(_ bytes: [UInt8]) -> String { digest(bytes) }

    package static func keyID(of publicKey: Curve25519.Signing.PublicKey) -> String {
        String(StreamingHasher.hex(SHA256.hash(data: publicKey.rawRepresentation)).prefix(16))
    }

    package static func keyID(of privateKey: Curve25519.Signing.PrivateKey) -> String { keyID(of: privateKey.publicKey) }

    /// A role name: lower-case letters, digits and `-`, so that a message line cannot be forged
    /// by a name holding a space or a newline.
    package static func isRole(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d }
    }

    /// A sidecar for `files` (by role; `table` required), not yet signed by anyone.
    package static func unsigned(covering files: [String: [UInt8]], version: Int64, signedAt: Int64? = nil, expires: Int64? = nil,
                                 rotations: [KeyRotation] = []) throws(CenariusError) -> TableSignature {
        guard files[tableRole] != nil else { throw .internal("a signature must cover the table") }
        for role in files.keys where !isRole(role) { throw .internal("bad role name \(role) for a signed file") }
        return TableSignature(version: version, signedAt: signedAt,
                              expires: expires, covers: files.mapValues(digest), rotations: rotations)
    }

    /// Adds `key`'s signature (replacing an earlier one by the same key).
    package mutating func sign(with key: Curve25519.Signing.PrivateKey) throws(CenariusError) {
        let id = Self.keyID(of: key.publicKey)
        do {
            let signature = Array(try key.signature(for: message))
            signatures.removeAll { $0.keyID == id }
            signatures.append(Entry(keyID: id, signature: signature))
        } catch {
            throw .internal("cannot sign the table: \(error)")
        }
    }

    /// The first format's sidecar over the table and, when given, the release manifest.
    package static func sign(table: [UInt8], manifest: [UInt8]? = nil, version: Int64, with key: Curve25519.Signing.PrivateKey) throws(CenariusError) -> TableSignature {
        var files = [tableRole: table]
        files[releaseRole] = manifest
        var signature = try unsigned(covering: files, version: version)
        try signature.sign(with: key)
        return signature
    }

    /// Stands for the table digest in a first-format sidecar, which does not carry it.
    static let deviceTable = ""

    /// This sidecar as it applies to `files` (by role, as the device has them): throws an integrity
    /// error (exit 4) naming the first file that is not covered exactly, byte for byte.
    package func bound(to files: [String: [UInt8]], source: String) throws(CenariusError) -> TableSignature {
        var bound = self
        if covers[Self.tableRole] == Self.deviceTable, let table = files[Self.tableRole] { bound.covers[Self.tableRole] = Self.digest(table) }
        for role in Set(files.keys).union(covers.keys).sorted() {
            let what = role == Self.releaseRole ? "release manifest" : role == Self.tableRole ? "table" : "\(role) file"
            switch (files[role].map(Self.digest), bound.covers[role]) {
            case (let found?, let signed?) where found == signed: continue
            case (_?, nil): throw .integrity("the \(what) beside \(source) is not covered by its signature")
            case (nil, _?): throw .integrity("the signature of \(source) covers a \(what) the remote does not have")
            case (_?, _?): throw .integrity(role == Self.tableRole ? "bad signature on \(source) (the table does not match it)" : "the \(what) beside \(source) does not match its signature")
            case (nil, nil): continue
            }
        }
        return bound
    }

    /// Whether the sidecar names its table's digest (every one `routes` writes now; a first-format
    /// one written before it did does not).
    package var namesTable: Bool { covers[Self.tableRole] != Self.deviceTable }

    /// This sidecar bound to `files` when its signatures are over exactly these bytes, so that
    /// `keys` may join them on the same version (thresholds); nil when anything differs. One that
    /// names no table digest is only known to be over them when one of `keys` signed them.
    package func coSignable(by keys: [Curve25519.Signing.PrivateKey], over files: [String: [UInt8]], source: String) -> TableSignature? {
        guard let bound = try? bound(to: files, source: source) else { return nil }
        if namesTable { return bound }
        return bound.signers(among: keys.map(\.publicKey)).isEmpty ? nil : bound
    }

    /// The distinct keys among `keys` with a valid signature on this sidecar.
    package func signers(among keys: [Curve25519.Signing.PublicKey]) -> [Curve25519.Signing.PublicKey] {
        let message = self.message
        return keys.filter { key in
            let id = Self.keyID(of: key)
            // By id first; an entry without a matching id is still tried, so an id is only a hint.
            let ordered = signatures.filter { $0.keyID == id } + signatures.filter { $0.keyID != id }
            return ordered.contains { key.isValidSignature($0.signature, for: message) }
        }
    }

    /// Checks the signature over `table` and, when the remote has one, its release `manifest`
    /// against one key; a bad one is an integrity error (exit 4).
    package func verify(table: [UInt8], manifest: [UInt8]? = nil, with key: Curve25519.Signing.PublicKey, source: String) throws(CenariusError) {
        var files = [Self.tableRole: table]
        files[Self.releaseRole] = manifest
        guard try !bound(to: files, source: source).signers(among: [key]).isEmpty else {
            let other = keyID != Self.keyID(of: key) ? " (signed with key \(keyID), expected \(Self.keyID(of: key)))" : ""
            throw .integrity("bad signature on \(source)\(other)")
        }
    }
}
