import Testing
import RouteSync

/// The head's format (docs/remote-layout.md): written and read back equal, names from the routes
/// name and channel, and hostile heads refused whole.
@Suite struct ReleaseHeadTests {
    static let digest = String(repeating: "ab", count: 32)

    @Test func aHeadReadsBackEqualWithEveryPart() throws {
        var head = ReleaseHead(version: 1_795_652_164_789, table: Self.digest, tableSize: 161)
        #expect(try ReleaseHead.parse(head.serialized(), source: "t") == head)
        head.tableForm = String(repeating: "cd", count: 32)
        head.tableFormSize = 330
        head.index = String(repeating: "ef", count: 32)
        head.release = Array("{\"release\": \"r1\"}\n".utf8)
        head.signature = Array("{\"format\": \"cenarius-sig-2\", \"version\": 1795652164789}\n".utf8)
        #expect(try ReleaseHead.parse(head.serialized(), source: "t") == head)
        head.tablePatches = [ReleaseHead.TablePatch(from: String(repeating: "01", count: 32), digest: String(repeating: "23", count: 32), size: 3,
                                                    inline: [0x28, 0xB5, 0x2F]),
                             ReleaseHead.TablePatch(from: String(repeating: "45", count: 32), digest: String(repeating: "67", count: 32), size: 412)]
        #expect(try ReleaseHead.parse(head.serialized(), source: "t") == head)
        #expect(head.objects.map(\.path).contains("_cenarius/t/\(String(repeating: "23", count: 32)).patch"))
        #expect(head.objects.count == 5, "the table, its form, the index and two patches")
    }

    /// The packs the index names ride in the head as hints (read back equal), and a patch that
    /// would make the head heavier than a connection's first window stays out of it.
    @Test func packHintsReadBackAndAHeavyPatchStaysOut() throws {
        var head = ReleaseHead(version: 2, table: Self.digest, tableSize: 161)
        let solid = try #require(ContentHash(hex: String(repeating: "a1", count: 16)))
        let delta = try #require(ContentHash(hex: String(repeating: "b2", count: 16)))
        var index = ReleaseIndex(table: Self.digest)
        index.solidPack = .init(hash: solid, size: 4_284_180, files: 600)
        index.deltaPacks = [.init(from: String(repeating: "01", count: 32), hash: delta, size: 21_874, bases: [])]
        head.tablePatches = [ReleaseHead.TablePatch(from: String(repeating: "01", count: 32), digest: String(repeating: "23", count: 32), size: 3, inline: [1, 2, 3]),
                             ReleaseHead.TablePatch(from: String(repeating: "45", count: 32), digest: String(repeating: "67", count: 32), size: 412)]
        head.hintPacks(from: index)
        #expect(head.solidPack == .init(hash: solid, size: 4_284_180))
        #expect(head.tablePatches.map(\.pack) == [.init(hash: delta, size: 21_874), nil])
        #expect(try ReleaseHead.parse(head.serialized(), source: "t") == head)
        head.fitFirstWindow()
        #expect(head.tablePatches[0].inline == [1, 2, 3], "a light head keeps its patch")
        head.tablePatches[0].inline = [UInt8](repeating: 7, count: 9_500)
        #expect(head.serialized().count > ReleaseHead.firstWindow)
        head.fitFirstWindow()
        #expect(head.tablePatches[0].inline == nil)
        #expect(head.serialized().count <= ReleaseHead.firstWindow)
        #expect(throws: CenariusError.self) { try ReleaseHead.parse(Array(#"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(Self.digest)", "size": 1}, "solidPack": {"form": "xyz", "size": 1}}"#.utf8), source: "t") }
        // A known key of the wrong type is refused whole, as every other.
        #expect(throws: CenariusError.self) { try ReleaseHead.parse(Array(#"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(Self.digest)", "size": 1}, "solidPack": "a1a1"}"#.utf8), source: "t") }
    }

    /// A table patch decodes, with the earlier table as its prefix, to the new table then the index.
    @Test func aTablePatchDecodesWithTheEarlierTableAsItsPrefix() throws {
        let old = Array(String(repeating: #"{"uri": "a/b.js", "hash": "0123456789abcdef0123456789abcdef"},"#, count: 200).utf8)
        let new = old + Array(#"{"uri": "c.js", "hash": "fedcba9876543210fedcba9876543210"}"#.utf8)
        let patch = try Zstd.compress(new, prefix: old)
        #expect(patch.count < 200, "\(patch.count) bytes")
        let decoded = try Zstd.decompress(patch, prefix: old, limit: 1 << 20) == new
        #expect(decoded)
        let withAnotherBase = (try? Zstd.decompress(patch, prefix: Array("another table".utf8), limit: 1 << 20)) == new
        #expect(!withAnotherBase, "a patch is only the new table from its own base")
    }

    @Test func namesFollowTheTableAndTheChannel() {
        #expect(ReleaseHead.name(routesName: "Routes.json") == "Routes.head")
        #expect(ReleaseHead.name(routesName: "Routes.json", channel: "beta") == "Routes.beta.head")
        #expect(ReleaseHead.name(routesName: "table") == "table.head")
        #expect(ReleaseHead.tablePath(Self.digest) == "_cenarius/t/\(Self.digest).json")
        #expect(!ReleaseHead.isChannel("Beta") && !ReleaseHead.isChannel("a/b") && !ReleaseHead.isChannel("") && ReleaseHead.isChannel("beta-2"))
    }

    @Test(arguments: [
        "", "[]", "{}", #"{"format": "cenarius-head-2"}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "ab", "size": 1}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": -1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(String(repeating: "AB", count: 32))", "size": 1}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1e300}}"#,
        #"{"format": "cenarius-head-1", "channel": "../x", "version": 1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1}, "release": {}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1, "patches": {}}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1, "patches": [{"from": "x"}]}}"#,
        #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(String(repeating: "ab", count: 32))", "size": 1, "patches": [{"from": "\#(String(repeating: "ab", count: 32))", "sha256": "\#(String(repeating: "ab", count: 32))", "size": 1, "bytes": "!!"}]}}"#,
    ])
    func hostileHeadsAreRefusedWhole(_ text: String) {
        #expect(throws: CenariusError.self) { try ReleaseHead.parse(Array(text.utf8), source: "t") }
    }

    @Test func aHeadPastItsSizeIsRefused() {
        let padding = String(repeating: " ", count: ReleaseHead.maxBytes)
        let text = #"{"format": "cenarius-head-1", "channel": "default", "version": 1, "table": {"sha256": "\#(Self.digest)", "size": 1}}"# + padding
        #expect(throws: CenariusError.self) { try ReleaseHead.parse(Array(text.utf8), source: "t") }
    }

    /// The signed files include the channel, so a head served at another channel's name does not verify.
    @Test func theSignatureCoversTheChannel() {
        let head = ReleaseHead(channel: "beta", version: 1, table: Self.digest, tableSize: 1)
        let files = head.signedFiles(table: [1], index: nil)
        #expect(files[ReleaseHead.channelRole] == Array("cenarius-channel:beta".utf8))
        #expect(files[TableSignature.tableRole] == [1])
    }
}
