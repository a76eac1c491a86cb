import Testing
@testable import RouteSync

/// Tables no file system can hold are invalid tables (contract, "URI rules"): caught when the
/// table is read, before anything is built, with exit 4 naming the entries.
@Suite struct TableShapeTests {
    let md5a = "0123456789abcdef0123456789abcdef"
    let md5b = "fedcba9876543210fedcba9876543210"

    func parse(_ uris: [String]) throws(CenariusError) -> RouteTable {
        var entries: [String] = []
        for (i, uri) in uris.enumerated() { entries.append("{\"uri\":\"\(uri)\",\"hash\":\"\(i % 2 == 0 ? md5a : md5b)\"}") }
        return try RouteTable.parse(Array(("[" + entries.joined(separator: ",") + "]").utf8), source: "test")
    }

    @Test(arguments: [["conf", "conf/b"], ["conf/b", "conf"], ["a/b/c", "x", "a/b"], ["a/b/c", "a"], ["d/x", "d/y", "e/z", "d"]])
    func aFileThatIsAlsoAFolderIsAnInvalidTable(uris: [String]) {
        do {
            _ = try parse(uris)
            Issue.record("accepted \(uris)")
        } catch {
            #expect(error.code == .integrity)
            #expect(error.message.contains("as a file and as the folder of"), "\(error.message)")
        }
    }

    @Test func theMessageNamesBothEntries() {
        #expect(throws: CenariusError.self) { try parse(["static/x.js", "conf", "conf/b"]) }
        do { _ = try parse(["conf", "conf/b"]) } catch { #expect(error.message.contains("\"conf\"") && error.message.contains("\"conf/b\"")) }
    }

    @Test func siblingsThatShareAPrefixAreFine() throws {
        #expect(try parse(["conf", "conf.d/b", "conf-x/c", "confb", "a/conf", "a/conf2/x"]).count == 6)
    }

    @Test func aSegmentLongerThan255BytesIsInvalid() throws {
        let long = String(repeating: "x", count: 256)
        let fine = String(repeating: "y", count: 255)
        #expect(try parse([fine, "d/" + fine]).count == 2)
        for uri in [long, "d/" + long, long + "/f"] {
            do {
                _ = try parse([uri])
                Issue.record("accepted a \(uri.utf8.count)-byte uri")
            } catch {
                #expect(error.code == .integrity)
                #expect(error.message.contains("longer than 255 bytes"), "\(error.message)")
            }
        }
        // Multi-byte characters count as bytes: 128 × "é" is 256 bytes.
        #expect(throws: CenariusError.self) { try parse([String(repeating: "é", count: 128)]) }
    }

    @Test func nfcAndNfdFormsAreTwoUris() throws {
        let nfc = "caf\u{E9}.txt"
        let nfd = "cafe\u{301}.txt"
        #expect(nfc == nfd, "Swift compares Strings by canonical equivalence")
        let table = try parse([nfc, nfd])
        #expect(table.count == 2, "two byte strings, two uris, even with different hashes")
        #expect(table[try URIPath(validating: nfc)]?.hash.hex == md5a)
        #expect(table[try URIPath(validating: nfd)]?.hash.hex == md5b)
        #expect(try URIPath(lookup: "cafe%CC%81.txt") == URIPath(validating: nfd))
        #expect(try URIPath(lookup: "caf%C3%A9.txt") != URIPath(validating: nfd))
        // A folder in one form and a file in the other are two names too.
        #expect(try parse(["caf\u{E9}", "cafe\u{301}/x"]).count == 2)
    }
}
