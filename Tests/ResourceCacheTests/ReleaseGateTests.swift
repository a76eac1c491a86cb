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
    func head(version: Int64, signedAs signed: Int64? = nil, sign: ((inout TableSignature) throws -> Void)?) throws -> ReleaseHead {
        var head = ReleaseHead(channel: "beta", version: version, table: ReleaseIndex.tableDigest(table), tableSize: Int64(table.count))
        if let sign {
            var signature = try TableSignature.unsigned(covering: head.signedFiles(table: table, index: nil), version: signed ?? version)
            try sign(&signature)
            head.signature = signature.serialized()
        }
        return head
    }

    func gate(_ verifier: TableSignatureVerifier?) async throws -> (ReleaseGate, Remote) {
        var f = try await Fixture.registered()
        f.settings.tableVerifier = verifier
        try FileManager.default.createDirectory(atPath: f.settings.cache.root, withIntermediateDirectories: true)
        return (ReleaseGate(f.settings), try Remote(f.origin.url, channel: "beta"))
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
}
