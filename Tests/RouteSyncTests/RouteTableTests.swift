import Testing
@testable import RouteSync

@Suite struct RouteTableTests {
    let md5a = "0123456789abcdef0123456789abcdef"
    let md5b = "fedcba9876543210fedcba9876543210"
    let sha = String(repeating: "ab", count: 32)

    func parse(_ text: String) throws(CenariusError) -> RouteTable {
        try RouteTable.parse(Array(text.utf8), source: "test")
    }

    @Test func parsesCenariusTable() throws {
        let table = try parse(#"[{"uri":"index.html","hash":"\#(md5a)"},{"file":"js/app.js","hash":"\#(sha.uppercased())","size":12}]"#)
        #expect(table.count == 2)
        #expect(table[try URIPath(validating: "index.html")]?.hash.algorithm == .md5)
        let app = table[try URIPath(validating: "js/app.js")]
        #expect(app?.hash.hex == sha)
        #expect(app?.hash.algorithm == .sha256)
        #expect(app?.size == 12)
    }

    @Test func ignoresUnknownKeysOfAnyShape() throws {
        let table = try parse(#"[{"uri":"a","hash":"\#(md5a)","x":{"y":[1,2.5e3,true,null,"s\u00e9"]},"z":-1}]"#)
        #expect(table.count == 1)
    }

    /// Issue 28: sizes are summed for the free-space check; one past any real file (8 PiB) is
    /// an invalid table (exit 4), never a trap later.
    @Test func sizesBeyondAnySaneRangeAreAnInvalidTable() throws {
        for size in ["9223372036854775807", "9007199254740993", "99999999999999999999", "-1", "1e3", "1.5"] {
            #expect(throws: CenariusError.self, "\(size)") { try parse(#"[{"uri":"a","hash":"\#(md5a)","size":\#(size)}]"#) }
        }
        do {
            _ = try parse(#"[{"uri":"a","hash":"\#(md5a)","size":9223372036854775807}]"#)
        } catch {
            #expect(error.code == .integrity && error.message.contains("size"))
        }
        #expect(try parse(#"[{"uri":"a","hash":"\#(md5a)","size":9007199254740992}]"#).entries[0].size == 1 << 53)
    }

    @Test func decodesEscapesInUris() throws {
        let table = try parse(#"[{"uri":"caf\u00e9/\ud83d\ude00.png","hash":"\#(md5a)"}]"#)
        #expect(table.entries[0].uri.value == "café/😀.png")
    }

    @Test func foldsIdenticalDuplicates() throws {
        let table = try parse(#"[{"uri":"a","hash":"\#(md5a)"},{"uri":"a","hash":"\#(md5a.uppercased())"}]"#)
        #expect(table.count == 1)
    }

    @Test(arguments: [
        #"[{"uri":"a","hash":"0123456789abcdef0123456789abcdef"},{"uri":"a","hash":"fedcba9876543210fedcba9876543210"}]"#,
        #"[{"uri":"../x","hash":"0123456789abcdef0123456789abcdef"}]"#,
        #"[{"uri":"/x","hash":"0123456789abcdef0123456789abcdef"}]"#,
        #"[{"uri":"x","hash":"0123"}]"#,
        #"[{"uri":"x","hash":"zz23456789abcdef0123456789abcdef"}]"#,
        #"[{"uri":"x"}]"#,
        #"[{"hash":"0123456789abcdef0123456789abcdef"}]"#,
        #"[{"uri":1,"hash":"0123456789abcdef0123456789abcdef"}]"#,
        #"{"uri":"x"}"#,
        #"[{"uri":"x","hash":"0123456789abcdef0123456789abcdef"}"#,
        #"[{"uri":"x","hash":"0123456789abcdef0123456789abcdef"}] trailing"#,
        #"[{"uri":"a\u0000b","hash":"0123456789abcdef0123456789abcdef"}]"#,
        #"[{"uri":"a\ud800","hash":"0123456789abcdef0123456789abcdef"}]"#,
        "",
        "[",
    ])
    func rejectsWholeTable(_ text: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.code == .integrity)
            #expect(error.message.contains("test") || error.message.contains("twice"))
        }
    }

    @Test func rejectsDeepNesting() {
        let deep = "[{\"uri\":\"a\",\"hash\":\"\(md5a)\",\"x\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}]"
        #expect(throws: CenariusError.self) { try parse(deep) }
    }

    @Test func serializedRoundTrips() throws {
        let table = try parse(#"[{"uri":"z\"q","hash":"\#(md5a)"},{"uri":"a","hash":"\#(md5b)","size":3}]"#)
        let again = try RouteTable.parse(table.serialized(), source: "again")
        #expect(Set(again.entries) == Set(table.entries))
        #expect(again.entries.first?.uri.value == "a")
    }

    @Test func parsesTwentyThousandEntries() throws {
        var text = "["
        for i in 0..<20_000 {
            text += (i == 0 ? "" : ",") + #"{"uri":"assets/dir\#(i % 50)/file-\#(i).js","hash":"\#(md5a)"}"#
        }
        text += "]"
        let table = try parse(text)
        #expect(table.count == 20_000)
    }

    @Test func differenceNamesChanges() throws {
        let old = try parse(#"[{"uri":"a","hash":"\#(md5a)"},{"uri":"b","hash":"\#(md5a)"}]"#)
        let new = try parse(#"[{"uri":"a","hash":"\#(md5b)"},{"uri":"c","hash":"\#(md5a)"}]"#)
        let diff = TableDifference(from: old, to: new)
        #expect(diff.changed.map(\.value) == ["a"])
        #expect(diff.added.map(\.value) == ["c"])
        #expect(diff.removed.map(\.value) == ["b"])
    }
}
