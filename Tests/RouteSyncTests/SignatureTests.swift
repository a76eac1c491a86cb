import Testing
@testable import RouteSync

@Suite struct SignatureTests {
    let table = Array(#"[{"uri":"a","hash":"0123456789abcdef0123456789abcdef"}]"#.utf8)

    @Test func signAndVerifyRoundTrip() throws {
        let (key, publicKey) = SigningKeys.generate()
        let signature = try TableSignature.sign(table: table, version: 7, with: key)
        let parsed = try TableSignature.parse(signature.serialized(), source: "sig")
        #expect(parsed.isFirstFormat)
        // The first format carries no table digest: bound to the device's table, it is the same.
        #expect(try parsed.bound(to: [TableSignature.tableRole: table], source: "t") == signature)
        try parsed.verify(table: table, with: publicKey, source: "t")
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
