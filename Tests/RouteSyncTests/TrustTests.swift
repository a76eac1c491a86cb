import Crypto
import Foundation
import Testing
@testable import RouteSync

/// Thresholds, expiry, rotations and the sidecar's two formats (G8, docs/signing.md), through the
/// verifier's pure check (no network).
@Suite struct TrustTests {
    let table = Array(#"[{"uri":"a","hash":"0123456789abcdef0123456789abcdef"}]"#.utf8)
    var files: [String: [UInt8]] { [TableSignature.tableRole: table] }

    func sidecar(version: Int64 = 7, signedAt: Int64? = nil, expires: Int64? = nil, rotations: [KeyRotation] = [],
                 by keys: [Curve25519.Signing.PrivateKey]) throws -> [UInt8] {
        var signature = try TableSignature.unsigned(covering: files, version: version, signedAt: signedAt, expires: expires, rotations: rotations)
        for key in keys { try signature.sign(with: key) }
        return signature.serialized()
    }

    func check(_ verifier: TableSignatureVerifier, _ bytes: [UInt8], trust: TrustState = TrustState(), now: Double = 1000,
               inForce: Int64? = nil) throws(CenariusError) -> TableSignatureVerifier.Verified {
        try verifier.check(sidecar: bytes, files: files, source: "t", sidecarSource: "t.sig", standing: .init(inForce: inForce, trust: trust, now: now))
    }

    func refusal(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "accepted"
        } catch let error as CenariusError {
            #expect(error.code == .integrity)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// A sidecar as `routes` wrote it before this format grew: built here by hand, message and all.
    @Test func aSidecarFromTheFirstFormatStillVerifies() throws {
        let key = Curve25519.Signing.PrivateKey()
        let message = "cenarius-sig-1\n42\n" + TableSignature.digest(table)
        let raw = Array(try key.signature(for: Array(message.utf8)))
        let text = #"{"format": "cenarius-sig-1", "version": 42, "key": "\#(TableSignature.keyID(of: key.publicKey))", "signature": "\#(Base64.encode(raw))"}"#
        let verified = try check(TableSignatureVerifier(key: key.publicKey), Array(text.utf8))
        #expect(verified.version == 42)
        #expect(verified.sidecar == Array(text.utf8))
    }

    @Test func aNewSidecarWithNothingNewIsTheFirstFormat() throws {
        let key = Curve25519.Signing.PrivateKey()
        let bytes = try sidecar(by: [key])
        #expect(String(decoding: bytes, as: UTF8.self).contains("cenarius-sig-1"))
        #expect(String(decoding: try sidecar(expires: 2000, by: [key]), as: UTF8.self).contains("cenarius-sig-2"))
        #expect(String(decoding: try sidecar(by: [key, Curve25519.Signing.PrivateKey()]), as: UTF8.self).contains("cenarius-sig-2"))
    }

    @Test func thresholdsCountDistinctTrustedKeys() throws {
        let a = Curve25519.Signing.PrivateKey(), b = Curve25519.Signing.PrivateKey(), stranger = Curve25519.Signing.PrivateKey()
        let verifier = TableSignatureVerifier(keys: [a.publicKey, b.publicKey], required: 2)
        #expect(refusal { _ = try check(verifier, try sidecar(by: [a])) }.contains("1 valid signature from trusted keys, 2 required"))
        #expect(refusal { _ = try check(verifier, try sidecar(by: [a, stranger])) }.contains("2 required"))
        // The same key twice is one signer.
        var doubled = try TableSignature.parse(try sidecar(by: [a]), source: "s").bound(to: files, source: "t")
        doubled.signatures.append(doubled.signatures[0])
        #expect(refusal { _ = try check(verifier, doubled.serialized()) }.contains("2 required"))
        let verified = try check(verifier, try sidecar(by: [b, a]))
        #expect(Set(verified.signers) == Set([a, b].map { TableSignature.keyID(of: $0.publicKey) }))
        // With one required, either key will do.
        #expect(try check(TableSignatureVerifier(keys: [a.publicKey, b.publicKey]), try sidecar(by: [b])).version == 7)
    }

    @Test func expiryIsSignedAndJudgedByTheDevicesClock() throws {
        let key = Curve25519.Signing.PrivateKey()
        let verifier = TableSignatureVerifier(key: key.publicKey)
        let bytes = try sidecar(signedAt: 1000, expires: 2000, by: [key])
        #expect(try check(verifier, bytes, now: 1999).expires == 2000)
        #expect(refusal { _ = try check(verifier, bytes, now: 2000) }.contains("expired at"))
        // Signed in the device's future: not refused for that.
        #expect(try check(verifier, bytes, now: 10).signedAt == 1000)
        // The expiry is under the signature.
        let stretched = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"expires\": 2000", with: "\"expires\": 9000")
        #expect(refusal { _ = try check(verifier, Array(stretched.utf8), now: 2500) }.contains("bad signature"))
    }

    @Test func aRotationMovesTrustToTheNewKeyForGood() throws {
        let a = Curve25519.Signing.PrivateKey(), b = Curve25519.Signing.PrivateKey(), c = Curve25519.Signing.PrivateKey()
        let verifier = TableSignatureVerifier(key: a.publicKey)
        let ab = try KeyRotation.make(from: a, to: b.publicKey), bc = try KeyRotation.make(from: b, to: c.publicKey)
        #expect(try KeyRotation.parse(ab.serialized(), source: "r") == ab)
        // Without the statement, the new key is a stranger.
        #expect(refusal { _ = try check(verifier, try sidecar(by: [b])) }.contains("bad signature"))
        let moved = try check(verifier, try sidecar(rotations: [ab], by: [b]))
        #expect(moved.trust.retired == [TableSignature.keyID(of: a.publicKey)])
        // From then on the old key is refused, even though it is still configured.
        #expect(refusal { _ = try check(verifier, try sidecar(version: 8, by: [a]), trust: moved.trust) }.contains("bad signature"))
        #expect(try check(verifier, try sidecar(version: 8, by: [b]), trust: moved.trust).version == 8)
        // A chain is followed in order, from the start or from where the device is.
        let chained = try check(verifier, try sidecar(rotations: [ab, bc], by: [c]))
        #expect(chained.trust.retired.count == 2)
        #expect(try check(verifier, try sidecar(rotations: [ab, bc], by: [c]), trust: moved.trust).trust == chained.trust)
        // A device shipped with the newest key ignores the history before it.
        #expect(try check(TableSignatureVerifier(key: c.publicKey), try sidecar(rotations: [ab, bc], by: [c])).trust == TrustState())
        #expect(try TrustState.parse(chained.trust.serialized(), source: "trust.json") == chained.trust)
    }

    @Test func forgedOrBackwardRotationsAreRefused() throws {
        let a = Curve25519.Signing.PrivateKey(), b = Curve25519.Signing.PrivateKey(), x = Curve25519.Signing.PrivateKey()
        let verifier = TableSignatureVerifier(key: a.publicKey)
        let xy = try KeyRotation.make(from: x, to: b.publicKey)
        #expect(refusal { _ = try check(verifier, try sidecar(rotations: [xy], by: [b])) }.contains("not signed by a key this device trusts"))
        let moved = try check(verifier, try sidecar(rotations: [try KeyRotation.make(from: a, to: b.publicKey)], by: [b]))
        let back = try KeyRotation.make(from: b, to: a.publicKey)
        #expect(refusal { _ = try check(verifier, try sidecar(version: 9, rotations: [back], by: [a]), trust: moved.trust) }.contains("goes back to key"))
        // The retired key signing a new hand-over: whoever holds it now is not trusted.
        let ax = try KeyRotation.make(from: a, to: x.publicKey)
        #expect(refusal { _ = try check(verifier, try sidecar(version: 9, rotations: [ax], by: [x]), trust: moved.trust) }.contains("retired"))
        // A statement whose signature does not hold.
        var text = String(decoding: try sidecar(rotations: [try KeyRotation.make(from: a, to: b.publicKey)], by: [b]), as: UTF8.self)
        text = text.replacingOccurrences(of: Base64.encode(Array(b.publicKey.rawRepresentation)), with: Base64.encode(Array(x.publicKey.rawRepresentation)))
        #expect(refusal { _ = try check(verifier, Array(text.utf8)) }.contains("not signed by the key it rotates from"))
    }

    @Test func rollbackIsRefusedByVersion() throws {
        let key = Curve25519.Signing.PrivateKey()
        #expect(refusal { _ = try check(TableSignatureVerifier(key: key.publicKey), try sidecar(version: 5, by: [key]), inForce: 6) }.contains("rollback refused"))
    }

    @Test(arguments: [#"{"format":"cenarius-sig-2","version":1,"covers":{},"signatures":[]}"#,
                      #"{"format":"cenarius-sig-2","version":1,"covers":{"table":"00"},"signatures":[{"key":"","signature":""}]}"#,
                      #"{"format":"cenarius-sig-2","version":1,"covers":{"table 1":"0000000000000000000000000000000000000000000000000000000000000000"},"signatures":[]}"#,
                      #"{"format":"cenarius-sig-2","version":1,"covers":{"table":"0000000000000000000000000000000000000000000000000000000000000000"},"signatures":[{"key":"a","signature":"AAAA"}]}"#,
                      #"{"format":"cenarius-sig-2","version":1,"covers":{"table":"0000000000000000000000000000000000000000000000000000000000000000"},"signatures":[{"key":"a","signature":"AAAA"}],"rotations":[{}]}"#])
    func malformedSecondFormatSidecarsAreIntegrityErrors(_ text: String) {
        #expect(refusal { _ = try TableSignature.parse(Array(text.utf8), source: "sig") } != "accepted")
    }
}
