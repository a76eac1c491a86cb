package import Crypto

/// What a device's rotations changed in the keys it trusts, kept in the cache (`trust.json`): keys
/// rotated in, and the ids of keys rotated out, which are never trusted again whatever the
/// configuration says.
package struct TrustState: Sendable, Equatable {
    package static let format = "cenarius-trust-1"
    /// Raw public keys rotated in, in the order followed.
    package var added: [[UInt8]] = []
    package var retired: [String] = []

    package init(added: [[UInt8]] = [], retired: [String] = []) {
        self.added = added
        self.retired = retired
    }

    package func serialized() -> [UInt8] {
        let added = self.added.map { "\"\(Base64.encode($0))\"" }.joined(separator: ", ")
        let retired = self.retired.map { "\"\($0)\"" }.joined(separator: ", ")
        return Array("{\"format\": \"\(Self.format)\", \"added\": [\(added)], \"retired\": [\(retired)]}\n".utf8)
    }

    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> TrustState {
        var format = ""
        var added: [String] = []
        var retired: [String] = []
        let failure = JSONScanner.scanDocument(bytes) { scanner throws(JSONScanner.Failure) in
            try scanner.object { s, name throws(JSONScanner.Failure) in
                switch name {
                case "format": format = try s.string()
                case "added": try s.array { s throws(JSONScanner.Failure) in added.append(try s.string()) }
                case "retired": try s.array { s throws(JSONScanner.Failure) in retired.append(try s.string()) }
                default: try s.skipValue()
                }
            }
        }
        if let failure { throw .storage("corrupt cache: \(source): \(failure.reason) at byte \(failure.offset)") }
        guard format == Self.format else { throw .storage("corrupt cache: \(source) has format \(format), expected \(Self.format)") }
        var keys: [[UInt8]] = []
        for text in added {
            guard let raw = Base64.decode(text), raw.count == 32 else { throw .storage("corrupt cache: \(source) holds a key that is not base64 Ed25519") }
            keys.append(raw)
        }
        return TrustState(added: keys, retired: retired)
    }
}

/// The keys a device trusts now: the configured ones and those rotated in, less the retired.
package struct TrustedKeys: Sendable {
    package private(set) var keys: [Curve25519.Signing.PublicKey]
    package private(set) var state: TrustState

    package init(configured: [Curve25519.Signing.PublicKey], state: TrustState) {
        self.state = state
        var seen = Set(state.retired)
        keys = []
        for key in configured + state.added.compactMap({ try? Curve25519.Signing.PublicKey(rawRepresentation: $0) }) {
            if seen.insert(TableSignature.keyID(of: key)).inserted { keys.append(key) }
        }
    }

    package var ids: [String] { keys.map(TableSignature.keyID) }

    /// Follows a chain of rotation statements, oldest first: each one from a trusted key replaces
    /// it with its new key. Returns the statements it could not follow because they start from a
    /// key this device never knew (history before its own key, or a forgery: the caller decides,
    /// by whether the table is signed well enough without them).
    package mutating func follow(_ rotations: [KeyRotation], source: String) throws(CenariusError) -> [(number: Int, rotation: KeyRotation)] {
        var unknown: [(number: Int, rotation: KeyRotation)] = []
        for (index, rotation) in rotations.enumerated() {
            let name = "rotation \(index + 1) in \(source) (key \(rotation.fromID) to \(rotation.toID))"
            guard rotation.isSigned, let new = rotation.toKey else { throw .integrity("\(name) is not signed by the key it rotates from (refused)") }
            let fromTrusted = ids.contains(rotation.fromID), fromRetired = state.retired.contains(rotation.fromID)
            let toTrusted = ids.contains(rotation.toID), toRetired = state.retired.contains(rotation.toID)
            if fromTrusted {
                guard !toRetired else { throw .integrity("\(name) goes back to key \(rotation.toID), which this device retired (refused)") }
                keys.removeAll { TableSignature.keyID(of: $0) == rotation.fromID }
                state.retired.append(rotation.fromID)
                if !toTrusted {
                    keys.append(new)
                    state.added.append(rotation.to)
                }
            } else if fromRetired {
                // Followed before (a chain is published whole, every time); anything else from a
                // retired key is a forgery by whoever holds it now.
                guard toTrusted || toRetired else { throw .integrity("\(name) is signed by key \(rotation.fromID), which this device retired (refused)") }
            } else {
                unknown.append((index + 1, rotation))
            }
        }
        return unknown
    }
}
