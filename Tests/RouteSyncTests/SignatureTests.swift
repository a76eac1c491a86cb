import Testing
@testable import RouteSync

@Suite struct SignatureTests {
    let table = Array(#"[{"uri":"a","hash":"0123456789abcdef0123456789abcdef"}]"#.utf8)

    @Test func signAndVerifyRoundTrip() throws {
        let (key, publicKey) = SigningKeys.generate()
        let signature = try TableSignature.sign(table: table, version: 7, with: key)
        let parsed = try TableSignature.parse(signature.serialized(), source: "sig")
        #expect(parsed.isFirstFormat)
        // The first format names the table's digest now; older devices skip the key.
        #expect(parsed == signature && parsed.namesTable)
        #expect(try parsed.bound(to: [TableSignature.tableRole: table], source: "t") == signature)
        try parsed.verify(table: table, with: publicKey, source: "t")
        #expect(throws: CenariusError.self) { try parsed.verify(table: Array("[]".utf8), with: publicKey, source: "t") }
    }

    /// A first-format sidecar written before it named the table binds to any table; only a
    /// signature of the signer's own key tells whether it is over these bytes (issue 38).
    @Test func aSidecarIsJoinedOnlyOverTheExactBytesItsSignaturesAreOver() throws {
        let (key, _) = SigningKeys.generate()
        let (other, _) = SigningKeys.generate()
        let signed = try TableSignature.sign(table: table, version: 7, with: key)
        let changed = Array(#"[{"uri":"b","hash":"0123456789abcdef0123456789abcdef"}]"#.utf8)
        #expect(signed.coSignable(by: [other], over: [TableSignature.tableRole: table], source: "s") != nil)
        #expect(signed.coSignable(by: [other], over: [TableSignature.tableRole: changed], source: "s") == nil)
        var legacy = try TableSignature.parse(signed.serialized(), source: "s")
        legacy.covers[TableSignature.tableRole] = ""
        let legacyBytes = Array(String(decoding: legacy.serialized(), as: UTF8.self).utf8)
        let parsed = try TableSignature.parse(legacyBytes, source: "s")
        #expect(!parsed.namesTable)
        #expect(parsed.coSignable(by: [key], over: [TableSignature.tableRole: table], source: "s") != nil)
        #expect(parsed.coSignable(by: [key], over: [TableSignature.tableRole: changed], source: "s") == nil)
        #expect(parsed.coSignable(by: [other], over: [TableSignature.tableRole: table], source: "s") == nil)
    }

    /// Found by FuzzSignature: a key id holding control characters or quotes wrote back as
    /// invalid JSON; the origin's text is now quoted when serialised.
    @Test func aParsedSidecarWritesBackAsItRead() throws {
        let signature = "\"" + String(repeating: "A", count: 86) + "==\""
        let text = #"{"format": "cenarius-sig-1", "version": 2, "key": "k\b\"\\", "signature": \#(signature)}"#
        let parsed = try TableSignature.parse(Array(text.utf8), source: "sig")
        #expect(parsed.keyID == "k\u{8}\"\\")
        #expect(try TableSignature.parse(parsed.serialized(), source: "again") == parsed)
    }

    @Test func tamperedTableVersionOrKeyFail() throws {
        let (key, publicKey) = SigningKeys.generate()
        let signature = try TableSignature.sign(table: table, version: 7, with: key)
        var tampered = table
        tampered[tampered.count - 3] ^= 1
        #expect(throws: CenariusError.self) { try signature.verify(table: tampered, with: publicKey, source: "t") }
        var bumped = signature
        bumped.version = 8
        #expect(throws: CenariusError.self) { try bumped.verify(table: table, with: publicKey, source: "t") }
        let (_, other) = SigningKeys.generate()
        do {
            try signature.verify(table: table, with: other, source: "t")
            Issue.record("verified with the wrong key")
        } catch {
            #expect(error.code == .integrity)
            #expect(error.message.contains("signed with key"))
        }
    }

    @Test(arguments: ["", "{}", "[]", #"{"format":"cenarius-sig-1","version":1,"signature":"AAAA"}"#,
                      #"{"format":"other","version":1,"signature":""}"#, #"{"format":"cenarius-sig-1","version":-1,"signature":""}"#])
    func malformedSidecarsAreIntegrityErrors(_ text: String) {
        do {
            _ = try TableSignature.parse(Array(text.utf8), source: "sig")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .integrity)
        }
    }

    @Test func base64RoundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.decode("Zm9vYg==") == Array("foob".utf8))
        #expect(Base64.decode("Zm9v!") == nil)
    }
}
