import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import Transport
import TestOrigin

/// `ReleaseGate` alone (G8, issue 53): with keys, only a head whose signature holds moves the
/// version a device has seen; without keys, a head is taken as served.
@Suite(.awaitsCleanups) struct ReleaseGateTests {
    let table = Array(#"[{"uri": "index.html", "hash": "0123456789abcdef0123456789abcdef"}]"#.utf8)

    /// `sign` signs the head's sidecar (nil: the head is unsigned).
    func head(version: Int64, signedAs signed: Int64? = nil, expires: Int64? = nil, channel: String = "beta",
              rotations: [KeyRotation] = [], sign: ((inout TableSignature) throws -> Void)?) throws -> ReleaseHead {
        var head = ReleaseHead(channel: channel, version: version, table: ReleaseIndex.tableDigest(table), tableSize: Int64(table.count))
        if let sign {
            var signature = try TableSignature.unsigned(covering: head.signedFiles(table: table, index: nil), version: signed ?? version,
                                                        signedAt: expires.map { $0 - 60 }, expires: expires, rotations: rotations)
            try sign(&signature)
            head.signature = signature.serialized()
        }
        return head
    }

    func gate(_ verifier: TableSignatureVerifier?) async throws -> (ReleaseGate, Remote) {
        let (gate, remote, _) = try await gateAndCache(verifier)
        return (gate, remote)
    }

    func gateAndCache(_ verifier: TableSignatureVerifier?) async throws -> (ReleaseGate, Remote, CacheLayout) {
        var f = try await Fixture.registered()
        f.settings.tableVerifier = verifier
        try FileManager.default.createDirectory(atPath: f.settings.cache.root, withIntermediateDirectories: true)
        return (ReleaseGate(f.settings), try Remote(f.origin.url, channel: "beta"), f.settings.cache)
    }

    @Test func onlyAVerifiedHeadMovesTheVersionSeen() async throws {
        let (key, publicKey) = SigningKeys.generate()
        let (stranger, _) = SigningKeys.generate()
        let (gate, remote) = try await gate(TableSignatureVerifier(key: publicKey))
        let farAhead: Int64 = 9_000_000_000_000_000
        var state = HeadState(url: "x", version: 10)
        for (forged, why) in [(try head(version: farAhead, sign: nil), "not signed"),
                              (try head(version: farAhead) { try $0.sign(with: stranger) }, "bad signature"),
                              (try head(version: farAhead, signedAs: 11) { try $0.sign(with: key) }, "signed as version 11")] {
            #expect(throws: CenariusError.self, "\(why)") { _ = try gate.accept(head: forged, table: table, index: nil, remote: remote, inForce: 10) }
            gate.see(forged, verified: nil, in: &state)
            #expect(state.version == 10, "\(why): an unverified head moves nothing")
        }
        let genuine = try head(version: 12) { try $0.sign(with: key) }
        let verified = try gate.accept(head: genuine, table: table, index: nil, remote: remote, inForce: 10)
        gate.see(genuine, verified: verified, in: &state)
        #expect(state.version == 12)
    }

    @Test func withoutKeysAHeadIsTakenAsServed() async throws {
        let (gate, remote) = try await gate(nil)
        let served = try head(version: 42, sign: nil)
        #expect(try gate.accept(head: served, table: table, index: nil, remote: remote, inForce: nil) == nil)
        var state = HeadState(url: "x", version: 10)
        gate.see(served, verified: nil, in: &state)
        #expect(state.version == 42)
    }

    /// Every refusal of a signed head, each with the message a `why` shows, and none moves the version seen.
    @Test func everyRefusalOfASignedHeadSaysWhyAndMovesNothing() async throws {
        let (key, publicKey) = SigningKeys.generate()
        let (second, secondPublic) = SigningKeys.generate()
        let (gate, remote) = try await gate(TableSignatureVerifier(key: publicKey))
        let now = Int64(FileSystem.now())
        var state = HeadState(url: "x", version: 20)
        let cases: [(ReleaseHead, String)] = [
            (try head(version: 19) { try $0.sign(with: key) }, "older than version 20 in force"),
            (try head(version: 21, expires: now - 1) { try $0.sign(with: key) }, "expired"),
            (try head(version: 21, channel: "default") { try $0.sign(with: key) }.onChannel("beta"), "channel file beside"),
        ]
        for (refused, why) in cases {
            #expect { _ = try gate.accept(head: refused, table: table, index: nil, remote: remote, inForce: 20) } throws: { error in
                (error as? CenariusError)?.message.contains(why) == true
            }
            gate.see(refused, verified: nil, in: &state)
            #expect(state.version == 20, "\(why)")
        }
        // Two signatures required, one given.
        let (pair, pairRemote) = try await self.gate(TableSignatureVerifier(keys: [publicKey, secondPublic], required: 2))
        let once = try head(version: 21) { try $0.sign(with: key) }
        #expect { _ = try pair.accept(head: once, table: table, index: nil, remote: pairRemote, inForce: 20) } throws: { error in
            (error as? CenariusError)?.message.contains("1 valid signature from trusted keys, 2 required") == true
        }
        let twice = try head(version: 21) { try $0.sign(with: key); try $0.sign(with: second) }
        #expect(try pair.accept(head: twice, table: table, index: nil, remote: pairRemote, inForce: 20)?.version == 21)
    }

    /// A key rotated out (docs/signing.md, "Key rotation"): once a head carrying the statement
    /// old → new has been taken, the trust record retires the old key, and a later head signed by
    /// it alone — the configured key, a higher version — is refused by name, moving neither the
    /// version seen nor the trust record.
    @Test func aHeadSignedByAKeyRotatedOutIsRefused() async throws {
        let (old, oldPublic) = SigningKeys.generate()
        let (new, newPublic) = SigningKeys.generate()
        let (gate, remote, cache) = try await gateAndCache(TableSignatureVerifier(key: oldPublic))
        let rotation = try KeyRotation.make(from: old, to: newPublic)
        var state = HeadState(url: "x", version: 20)
        let handedOver = try head(version: 21, rotations: [rotation]) { try $0.sign(with: new) }
        gate.see(handedOver, verified: try gate.accept(head: handedOver, table: table, index: nil, remote: remote, inForce: 20), in: &state)
        #expect(state.version == 21)
        let trust = try TrustStore(layout: cache).read()
        #expect(trust.retired == [TableSignature.keyID(of: old)], "the rotation retired the configured key")
        let trustBytes = try FileSystem.readFile(cache.trust, limit: 1 << 20)

        let rotatedOut = try head(version: 22) { try $0.sign(with: old) }
        #expect { _ = try gate.accept(head: rotatedOut, table: table, index: nil, remote: remote, inForce: 21) } throws: { error in
            (error as? CenariusError)?.message.contains("signed with key \(TableSignature.keyID(of: old)), which this device retired in a key rotation") == true
        }
        gate.see(rotatedOut, verified: nil, in: &state)
        #expect(state.version == 21, "a head signed by a retired key moves nothing")
        #expect(try FileSystem.readFile(cache.trust, limit: 1 << 20) == trustBytes, "nor the trust record")
        // The new key's next head is taken: the refusal is the key's, not the gate's state.
        #expect(try gate.accept(head: try head(version: 22) { try $0.sign(with: new) }, table: table, index: nil, remote: remote, inForce: 21)?.version == 22)
    }

    /// The release a device rolled back from is held back by its table's SHA-256, the name a head gives it.
    @Test func theTableRolledBackFromIsHeldBackByItsDigest() async throws {
        let (gate, _, cache) = try await gateAndCache(nil)
        let digest = ReleaseIndex.tableDigest(table)
        #expect(!gate.holdsBack(table: digest))
        try ReleaseStore(layout: cache).update { $0.heldBack = digest }
        #expect(gate.holdsBack(table: digest) && !gate.holdsBack(table: ReleaseIndex.tableDigest(table + [0x0a])))
    }
}

extension ReleaseHead {
    /// The same head claiming another channel than the one its signature covers.
    fileprivate func onChannel(_ name: String) -> ReleaseHead {
        var head = self
        head.channel = name
        return head
    }
}
