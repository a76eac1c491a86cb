import Foundation
import Testing
@testable import ResourceCache
@testable import RouteSync
@testable import Transport
import TestOrigin

/// Text that compresses like a minified bundle (see RouteSyncTests' twin).
fileprivate func bundle(seed: UInt64, bytes: Int) -> [UInt8] {
    var state = seed
    var out: [UInt8] = []
    let words = ["function", "return", "const", "let", "this", "props", "state", "render", "=>", "{", "}", "(", ")", ";", "null", "undefined"]
    while out.count < bytes {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        out.append(contentsOf: words[Int(state >> 60)].utf8)
        out.append(contentsOf: String(state >> 48 & 0xFFF, radix: 36).utf8)
        out.append(UInt8(ascii: " "))
    }
    return Array(out.prefix(bytes))
}

/// A release folder on disk, published as `routes DIR --delta-from OLD...` would, and uploaded to the origin.
fileprivate struct Release {
    let root: String
    let table: RouteTable
    let tableBytes: [UInt8]

    init(_ files: [String: [UInt8]], in root: String, deltaFrom olds: [Release] = [], compress: Bool = true) throws {
        self.root = root
        for (uri, bytes) in files {
            let path = root + "/" + uri
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        table = try RouteTableBuilder(root: root).build().table
        tableBytes = table.serialized()
        try Data(tableBytes).write(to: URL(fileURLWithPath: root + "/Routes.json"))
        if compress {
            // A remote as `routes` wrote it before heads: the compressed table at its one mutable name.
            var publisher = FormPublisher(release: .init(root: root, table: table), tableBytes: tableBytes,
                                          olds: olds.map { .init(root: $0.root, table: $0.table) })
            publisher.tableFormBeside = true
            _ = try publisher.publish()
        }
    }

    /// Every file of the folder, as uploading it would.
    func upload(to origin: TestOrigin) throws {
        let enumerator = FileManager.default.enumerator(atPath: root)!
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            origin.put(relative, Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))))
        }
    }

    var index: ReleaseIndex {
        get throws {
            let path = root + "/" + ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(tableBytes))
            return try ReleaseIndex.parse(Array(Data(contentsOf: URL(fileURLWithPath: path))), source: path)
        }
    }

    func hash(_ uri: String) -> ContentHash { table.entries.first { $0.uri.value == uri }!.hash }
}

@Suite(.awaitsCleanups) struct ReleaseBytesTests {
    static let old: [String: [UInt8]] = [
        "index.html": Array("<script src=assets/main.1a2b3c4d.js></script>".utf8),
        "assets/main.1a2b3c4d.js": bundle(seed: 1, bytes: 400_000),
        "assets/vendor.js": bundle(seed: 2, bytes: 200_000),
        "logo.txt": bundle(seed: 3, bytes: 3000),
    ]
    static var new: [String: [UInt8]] {
        var new = old
        new["assets/main.1a2b3c4d.js"] = nil
        var main = old["assets/main.1a2b3c4d.js"]!
        main.replaceSubrange(200_000..<200_020, with: Array("/* release two !! */".utf8))
        new["assets/main.9f8e7d6c.js"] = main
        new["index.html"] = Array("<script src=assets/main.9f8e7d6c.js></script>".utf8)
        var vendor = old["assets/vendor.js"]!
        vendor.append(contentsOf: Array("export default 2;".utf8))
        new["assets/vendor.js"] = vendor
        return new
    }

    /// A release after `new`: its vendor bundle changed again (a patch from `new`'s).
    static var later: [String: [UInt8]] {
        var later = new
        later["assets/vendor.js"]! += Array("export const three = 3;".utf8)
        return later
    }

    fileprivate func releases(_ f: Fixture) throws -> (old: Release, new: Release) {
        let old = try Release(Self.old, in: f.root + "/old")
        let new = try Release(Self.new, in: f.root + "/new", deltaFrom: [old])
        return (old, new)
    }

    /// The old release synced and the new one published: the device's next sync takes a release.
    fileprivate func atRelease(_ f: Fixture) throws -> (old: Release, new: Release) {
        let (old, new) = try releases(f)
        try old.upload(to: f.origin)
        _ = try f.sync()
        try new.upload(to: f.origin)
        return (old, new)
    }

    func expectServes(_ f: Fixture, _ files: [String: [UInt8]]) throws {
        for (uri, bytes) in files {
            let resolution = try f.resolve(uri)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: resolution.path))) == bytes, "\(uri)")
        }
    }

    var formRequests: (Fixture) -> [String] { { f in f.origin.requests.map(\.path).filter { $0.hasPrefix("_cenarius/") } } }

    /// The index weighs each file's form as published (LAN peers share a release out by it):
    /// a patch's bytes where one exists, else the compressed form's, each the size of its object.
    @Test func theIndexGivesTheSizesOfTheFormsItNames() async throws {
        let f = try await Fixture.registered()
        let (old, new) = try releases(f)
        let index = try new.index
        let bytes = index.formBytes(for: new.table)
        let size = { (key: String) in FileSystem.regularFileSize(new.root + "/" + key) }
        #expect(index.patchSizes.count == index.patches.count && !index.patches.isEmpty)
        for (patch, listed) in zip(index.patches, index.patchSizes) { #expect(listed == size(ReleaseIndex.patchPath(patch))) }
        for entry in new.table.packOrder where !index.plain.contains(entry.hash) {
            let patch = index.patches.first { $0.target == entry.hash }
            let form = size(patch.map(ReleaseIndex.patchPath) ?? ReleaseIndex.formPath(entry.hash))
            // A form under 4 KiB is not listed (its file's size weighs it); a patch always is.
            #expect(bytes[entry.hash] == (patch != nil || form ?? 0 >= ReleaseIndex.smallestListedForm ? form : nil), "\(entry.uri)")
        }
        // The changed bundle weighs its patch, a few percent of the file.
        let main = new.hash("assets/main.9f8e7d6c.js")
        #expect(try #require(bytes[main]) < 20_000)
        let oldIndex = try old.index
        let first = oldIndex.formBytes(for: old.table)
        #expect(old.table.entries.allSatisfy { first[$0.hash] != nil || oldIndex.plain.contains($0.hash) || $0.size! < 8192 })
    }

    @Test func aReleaseIsFetchedAsPatches() async throws {
        let f = try await Fixture.registered()
        let (old, new) = try releases(f)
        try old.upload(to: f.origin)
        let first = try f.sync()
        // A first install: the pack, not one request per file.
        #expect(first.compressedFiles == 4)
        #expect(f.origin.requests.filter { $0.path.hasPrefix("_cenarius/pack/") }.count == 1)
        #expect(first.bytesFetched < first.bytesHeld)
        try expectServes(f, Self.old)

        try new.upload(to: f.origin)
        f.origin.resetRequests()
        let report = try f.sync()
        #expect(report.outcome == .committed)
        // The device saw the first release's index: it polls the compressed table, not the table.
        #expect(f.origin.gets.first?.path == "_cenarius/Routes.json.zst")
        #expect(f.origin.requests(for: "Routes.json").isEmpty)
        // ... whose second frame is the release index: no request for it.
        #expect(!f.origin.requests.contains { $0.path.hasPrefix("_cenarius/index/") })
        // The whole release in one request: the delta pack from the table the device holds.
        #expect(f.origin.requests.filter { $0.path.hasPrefix("_cenarius/pack/") }.count == 1)
        #expect(!f.origin.requests.contains { $0.path.hasPrefix("_cenarius/p/") || $0.path.hasPrefix("_cenarius/z/") })
        // main.js (under its new name), vendor.js and index.html.
        #expect(report.patchedFiles == 3)
        #expect(report.bytesFetched < 4000, "fetched \(report.bytesFetched)")
        #expect(report.bytesHeld > 600_000)
        #expect(f.fileRequests.filter { !$0.hasPrefix("_cenarius/") }.isEmpty)
        try expectServes(f, Self.new)

        // An unchanged poll is still one conditional request (B7).
        f.origin.resetRequests()
        #expect(try f.sync().outcome == .notModified)
        #expect(f.origin.requests.count == 1)
        #expect(f.origin.requests.first?.headers["if-none-match"] != nil)
    }

    @Test func aCompressedTableThatIsGoneOrBrokenCostsOneMoreRequest() async throws {
        let f = try await Fixture.registered()
        let (_, new) = try atRelease(f)
        // Broken: the table itself, in the same sync.
        f.origin.put("_cenarius/Routes.json.zst", Array("not zstd".utf8))
        f.origin.resetRequests()
        #expect(try f.sync().outcome == .committed)
        #expect(f.origin.requests.prefix(2).map(\.path) == ["_cenarius/Routes.json.zst", "Routes.json"])
        try expectServes(f, Self.new)
        // The next index says the remote publishes it again: polled; gone (404): the table, in the same sync.
        f.origin.remove("_cenarius/Routes.json.zst")
        _ = try Release(Self.old, in: f.root + "/third", deltaFrom: [new]).upload(to: f.origin)
        f.origin.remove("_cenarius/Routes.json.zst")
        f.origin.resetRequests()
        #expect(try f.sync().outcome == .committed)
        #expect(f.origin.requests.prefix(2).map(\.path) == ["_cenarius/Routes.json.zst", "Routes.json"])
        try expectServes(f, Self.old)
    }

    @Test func everyBrokenFormFallsBackToTheNextSource() async throws {
        let faults: [Fault] = [.status(404), .truncate, .corrupt, .status(500), .drop]
        for fault in faults {
            let f = try await Fixture.registered()
            let (_, new) = try atRelease(f)
            let index = try new.index
            // Every patch and compressed form broken: the plain files remain.
            let forms = index.patches.map(ReleaseIndex.patchPath) + new.table.entries.map { ReleaseIndex.formPath($0.hash) }
                + index.deltaPacks.map { ReleaseIndex.packPath($0.hash) }
            for path in forms { f.origin.inject(fault, on: path) }
            let report = try f.sync()
            #expect(report.outcome == .committed, "\(fault)")
            try expectServes(f, Self.new)
            if fault == .truncate {
                // The pack's frames are decoded as they arrive, each verified: those whole before
                // the cut are kept, and only the others fall back (through their broken forms to the plain file).
                let fromForms = report.patchedFiles + report.compressedFiles
                #expect(fromForms < report.downloadedFiles && report.formFallbacks >= 1, "\(fault)")
                #expect(report.formFallbacks >= report.downloadedFiles - fromForms, "\(fault)")
                continue
            }
            #expect(report.patchedFiles == 0 && report.compressedFiles == 0, "\(fault)")
            #expect(report.formFallbacks >= 3, "\(fault)")
            // Each form was asked for once: a failed form is not retried (FormPolicy). A dropped
            // connection is the exception: libcurl itself asks again once on a fresh connection
            // when a reused one turns out dead.
            for path in index.patches.map(ReleaseIndex.patchPath) where fault != .drop {
                #expect(f.origin.requests(for: path).count == 1, "\(fault)")
            }
        }
    }

    /// A first install takes the solid pack (one stream, SolidPack); cut short, it is resumed by
    /// Range and its decoding goes on where the bytes stopped.
    @Test func aPackCutShortIsResumedByRange() async throws {
        let f = try await Fixture.registered()
        let (old, _) = try releases(f)
        try old.upload(to: f.origin)
        let pack = try #require(try old.index.solidPack)
        #expect(try pack.size < old.index.pack!.size, "one stream is smaller than per-file frames")
        f.origin.inject(.truncate, on: ReleaseIndex.packPath(pack.hash), times: 1)
        let report = try f.sync()
        #expect(report.compressedFiles == 4)
        let asked = f.origin.requests(for: ReleaseIndex.packPath(pack.hash))
        #expect(asked.count == 2)
        #expect(asked.last?.headers["range"] != nil)
        #expect(report.bytesFetched < pack.size + 1000)
        try expectServes(f, Self.old)
    }

    @Test func aBrokenPatchFallsBackToTheCompressedForm() async throws {
        let f = try await Fixture.registered()
        let (_, new) = try atRelease(f)
        for patch in try new.index.patches { f.origin.inject(.status(404), on: ReleaseIndex.patchPath(patch)) }
        for delta in try new.index.deltaPacks { f.origin.inject(.status(404), on: ReleaseIndex.packPath(delta.hash)) }
        let report = try f.sync()
        #expect(report.patchedFiles == 0)
        // index.html is too small for zstd to shrink: it has no compressed form, and comes plain,
        // from the store's copy (an immutable name), not from its uri.
        #expect(report.compressedFiles == 2)
        let plain = new.hash("index.html")
        #expect(try new.index.plain.contains(plain))
        #expect(f.origin.requests(for: ReleaseIndex.plainPath(plain)).count == 1)
        #expect(f.origin.requests(for: "index.html").isEmpty)
        try expectServes(f, Self.new)
    }

    /// An index that lies (a patch against another base, a bomb, another file's form), its forms
    /// named by their true hashes so that only decoding can tell: every file still arrives right.
    @Test func lyingFormsAreDroppedForThePlainFile() async throws {
        let f = try await Fixture.registered()
        let (old, new) = try atRelease(f)
        let main = new.hash("assets/main.9f8e7d6c.js"), vendor = new.hash("assets/vendor.js"), html = new.hash("index.html")
        // Wrong base: a patch made against other bytes, offered from a base the device holds.
        var index = try new.index
        index.deltaPacks = []
        index.patches = [.init(target: main, base: old.hash("assets/main.1a2b3c4d.js"))]
        f.origin.put(ReleaseIndex.patchPath(index.patches[0]), try Zstd.compress(Self.new["assets/main.9f8e7d6c.js"]!, prefix: bundle(seed: 9, bytes: 400_000)))
        f.origin.put(ReleaseIndex.formPath(main), try Zstd.compress(bundle(seed: 10, bytes: 1000)))
        // A bomb: a few KiB that inflate to 64 MiB, for a 200 KB file (its window is refused, or its output stops at the limit).
        f.origin.put(ReleaseIndex.formPath(vendor), try Zstd.compress([UInt8](repeating: 0x41, count: 64 << 20), level: 1))
        // Another file's form.
        index.plain.remove(html)
        f.origin.put(ReleaseIndex.formPath(html), try Zstd.compress(Array("<p>not this</p>".utf8)))
        // Both where the device may find the index: with the compressed table, and on its own.
        f.origin.put(ReleaseIndex.indexPath(table: index.table), index.serialized())
        f.origin.put(ReleaseIndex.tablePath("Routes.json"), try Zstd.compress(new.tableBytes) + Zstd.compress(index.serialized()))
        let report = try f.sync()
        #expect(report.outcome == .committed)
        #expect(report.formFallbacks == 4)
        #expect(report.patchedFiles == 0 && report.compressedFiles == 0)
        try expectServes(f, Self.new)
    }

    @Test func aLyingDeltaPackLeavesItsFilesToTheirPatches() async throws {
        let f = try await Fixture.registered()
        let (_, new) = try atRelease(f)
        // A pack named by its true hash whose frames are other files: only decoding can tell.
        var index = try new.index
        let delta = try #require(index.deltaPacks.first)
        let lie = try delta.bases.flatMap { _ in try Zstd.compress(Array("not this".utf8)) }
        let hash = StreamingHasher.hash(lie, .md5)
        f.origin.put(ReleaseIndex.packPath(hash), lie)
        index.deltaPacks = [.init(from: delta.from, hash: hash, size: Int64(lie.count), bases: delta.bases.map { _ in nil })]
        f.origin.put(ReleaseIndex.tablePath("Routes.json"), try Zstd.compress(new.tableBytes) + Zstd.compress(index.serialized()))
        let report = try f.sync()
        #expect(report.outcome == .committed)
        #expect(report.formFallbacks == delta.bases.count)
        #expect(report.patchedFiles == 3)
        try expectServes(f, Self.new)
    }

    @Test func oversizeOutputStopsAtMaxFileSize() async throws {
        // A table without sizes: the limit is --max-file-size.
        var f = try await Fixture.registered()
        f.settings.transfer.maxFileSize = 1 << 20
        let table = f.origin.publish(["a.txt": "small"])
        let bomb = try Zstd.compress([UInt8](repeating: 0, count: 8 << 20), level: 1)
        let hash = ContentHash(hex: TestOrigin.md5(Array("small".utf8)))!
        f.origin.put(ReleaseIndex.formPath(hash), bomb)
        f.origin.put(ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(table)), ReleaseIndex(table: ReleaseIndex.tableDigest(table)).serialized())
        let report = try f.sync()
        #expect(report.formFallbacks == 1)
        #expect(f.origin.requests(for: "a.txt").count == 1)
        #expect(f.content(try f.resolve("a.txt")) == "small")
    }

    @Test func thePresetIsABase() async throws {
        let f = try await Fixture.registered()
        let (old, new) = try releases(f)
        // The device ships with the old release as its preset and has never synced.
        try FileManager.default.removeItem(atPath: f.root + "/preset")
        try FileManager.default.copyItem(atPath: old.root, toPath: f.root + "/preset")
        try new.upload(to: f.origin)
        let report = try f.sync()
        #expect(report.patchedFiles == 3)
        #expect(report.bytesFetched < 4000)
        try expectServes(f, Self.new)
    }

    @Test func aRemoteWithoutFormsWorksAsBefore() async throws {
        let f = try await Fixture.registered()
        let plain = try Release(Self.old, in: f.root + "/plain", compress: false)
        try plain.upload(to: f.origin)
        let report = try f.sync()
        #expect(report.outcome == .committed)
        #expect(report.downloadedFiles == 4)
        #expect(report.bytesFetched == report.bytesHeld)
        // A first install asks for the head and the compressed table once each (404s, remembered),
        // then for the table, the index (a 404) and the files.
        #expect(formRequests(f) == [ReleaseIndex.tablePath("Routes.json"), ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(plain.tableBytes))])
        #expect(f.origin.requests.filter { $0.method == "GET" }.prefix(3).map(\.path) == ["Routes.head", ReleaseIndex.tablePath("Routes.json"), "Routes.json"])
        try expectServes(f, Self.old)
        // Later polls ask for the table alone, as they always did.
        let before = f.origin.requests.count
        #expect(try f.sync().outcome == .notModified)
        #expect(f.origin.requests.dropFirst(before).map(\.path) == ["Routes.json"])
    }

    /// A plain remote that refuses what it does not have (a private bucket answers 403) still gets
    /// its first install from the table in the same sync, and the refusal is remembered like a 404.
    @Test func aRefusedProbeFallsBackToTheTable() async throws {
        for (status, remembered) in [(403, true), (410, true)] {
            let f = try await Fixture.registered()
            let plain = try Release(Self.old, in: f.root + "/plain", compress: false)
            try plain.upload(to: f.origin)
            f.origin.inject(.status(status), on: ReleaseIndex.tablePath("Routes.json"))
            let report = try f.sync()
            #expect(report.outcome == .committed && report.downloadedFiles == 4, "\(status)")
            #expect(f.origin.requests.filter { $0.method == "GET" }.prefix(3).map(\.path) == ["Routes.head", ReleaseIndex.tablePath("Routes.json"), "Routes.json"], "\(status)")
            try expectServes(f, Self.old)
            let marker = try? String(contentsOfFile: f.root + "/cache/table-form", encoding: .utf8)
            #expect((marker?.hasPrefix("-") ?? false) == remembered, "\(status): \(marker ?? "none")")
        }
        // A server in trouble (503) is the origin down, as it would be for the table: the sync
        // fails, and nothing is remembered, so the next first sync asks again.
        let f = try await Fixture.registered()
        try Release(Self.old, in: f.root + "/plain", compress: false).upload(to: f.origin)
        f.origin.inject(.status(503), on: ReleaseIndex.tablePath("Routes.json"))
        _ = expectError(.remote) { _ = try f.sync() }
        #expect(!FileManager.default.fileExists(atPath: f.root + "/cache/table-form"))
    }

    @Test func signedTablesUseOnlyTheIndexTheyCover() async throws {
        var f = try await Fixture.registered()
        let (key, publicKey) = SigningKeys.generate()
        f.settings.tableVerifier = TableSignatureVerifier(key: publicKey)
        let (old, new) = try releases(f)
        func sign(_ release: Release, version: Int64) throws {
            let index = try Array(Data(contentsOf: URL(fileURLWithPath: release.root + "/" + ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(release.tableBytes)))))
            var signature = try TableSignature.sign(table: release.tableBytes, version: version, with: key)
            try signature.signForms(index: index, table: release.tableBytes, with: key)
            f.origin.put("Routes.json.sig", signature.serialized())
        }
        try old.upload(to: f.origin)
        try sign(old, version: 1)
        _ = try f.sync()
        try new.upload(to: f.origin)
        try sign(new, version: 2)
        #expect(try f.sync().patchedFiles == 3)
        try expectServes(f, Self.new)

        // A third release whose index was swapped after signing: plain files, still verified.
        let third = try Release(Self.later, in: f.root + "/third", deltaFrom: [new])
        try third.upload(to: f.origin)
        f.origin.put("Routes.json.sig", try TableSignature.sign(table: third.tableBytes, version: 3, with: key).serialized())
        let report = try f.sync()
        #expect(report.outcome == .committed)
        #expect(report.downloadedFiles == 1 && report.patchedFiles == 0 && report.compressedFiles == 0)
        try expectServes(f, Self.later)
    }

    /// With `--signatures-required 2`, an index is used only when two trusted keys vouch for it,
    /// as the table needs: one key alone (a stolen one) cannot choose what the device fetches.
    @Test func anIndexNeedsAsManySignaturesAsTheTable() async throws {
        var f = try await Fixture.registered()
        let (first, firstPublic) = SigningKeys.generate()
        let (second, secondPublic) = SigningKeys.generate()
        f.settings.tableVerifier = TableSignatureVerifier(keys: [firstPublic, secondPublic], required: 2)
        let (old, new) = try releases(f)
        /// Signs the table with both keys, and its index with the first `formsKeys` of them.
        func sign(_ release: Release, version: Int64, formsKeys: Int) throws {
            let index = try Array(Data(contentsOf: URL(fileURLWithPath: release.root + "/" + ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(release.tableBytes)))))
            var signature = try TableSignature.sign(table: release.tableBytes, version: version, with: first)
            try signature.sign(with: second)
            for key in [first, second].prefix(formsKeys) { try signature.signForms(index: index, table: release.tableBytes, with: key) }
            f.origin.put("Routes.json.sig", signature.serialized())
        }
        try old.upload(to: f.origin)
        try sign(old, version: 1, formsKeys: 2)
        #expect(try f.sync().compressedFiles == 4)

        try new.upload(to: f.origin)
        try sign(new, version: 2, formsKeys: 1)
        let oneShort = try f.sync()
        #expect(oneShort.outcome == .committed)
        #expect(oneShort.patchedFiles == 0 && oneShort.compressedFiles == 0)
        try expectServes(f, Self.new)

        let third = try Release(Self.later, in: f.root + "/third", deltaFrom: [new])
        try third.upload(to: f.origin)
        try sign(third, version: 3, formsKeys: 2)
        let both = try f.sync()
        #expect(both.downloadedFiles == 1 && both.patchedFiles == 1, "\(both)")
        try expectServes(f, Self.later)
    }

    @Test func seedGoesThroughPatches() async throws {
        let f = try await Fixture.registered()
        let (old, new) = try releases(f)
        try FileManager.default.removeItem(atPath: f.root + "/preset")
        try FileManager.default.copyItem(atPath: old.root, toPath: f.root + "/preset")
        try FileManager.default.removeItem(atPath: f.root + "/preset/_cenarius")
        try new.upload(to: f.origin)
        let seeder = Seeder(remote: f.settings.remotes[0], preset: f.settings.preset, transfer: f.settings.transfer)
        let report = try seeder.seed(check: false)
        #expect(report.patchedFiles == 3)
        #expect(report.bytesFetched < 4000)
        #expect(try seeder.seed(check: true).mismatched.isEmpty)
    }

    @Test func planPrefersAHeldBaseThenTheCompressedFormAndPacksAFirstInstall() throws {
        func h(_ c: Character) -> ContentHash { ContentHash(hex: String(repeating: c, count: 32))! }
        let one = RouteEntry(uri: try URIPath(validating: "a.js"), hash: h("1"), size: 60)
        let two = RouteEntry(uri: try URIPath(validating: "b.js"), hash: h("2"), size: 40)
        let table = try RouteTable(entries: [two, one])
        let index = ReleaseIndex(table: "", plain: [h("2")], patches: [.init(target: h("1"), base: h("9")), .init(target: h("1"), base: h("8"))],
                                 pack: .init(hash: h("e"), size: 70, files: 2))
        let update = FormPlan(downloads: [one], table: table, index: index, holding: .init { $0 == h("9") })
        #expect(update.sources[h("1")] == [.patch(base: h("9")), .zstd, .plain])
        #expect(update.pack == nil)
        #expect(update.bases == [h("9")])
        let install = FormPlan(downloads: [one, two], table: table, index: index, holding: .init { _ in false })
        #expect(install.pack != nil)
        #expect(install.sources[h("1")] == [.member(0), .zstd, .plain])
        #expect(install.sources[h("2")] == [.member(1), .plain])
        // Too little of the site to be worth the pack.
        #expect(FormPlan(downloads: [two], table: table, index: index, holding: .init { _ in false }).pack == nil)
        #expect(FormPlan(downloads: [two], table: table, index: nil, holding: .init { _ in true }).sources[h("2")] == [.plain])
    }

    @Test func aFirstInstallOfACarriedPackTakesItsFilesThenTheDeltaPack() throws {
        func h(_ c: Character) -> ContentHash { ContentHash(hex: String(repeating: c, count: 32))! }
        let one = RouteEntry(uri: try URIPath(validating: "a.js"), hash: h("1"), size: 60)
        let two = RouteEntry(uri: try URIPath(validating: "b.js"), hash: h("2"), size: 40)
        let old = RouteEntry(uri: try URIPath(validating: "a.js"), hash: h("9"), size: 58)
        let (table, earlier) = (try RouteTable(entries: [one, two]), try RouteTable(entries: [old, two]))
        let from = String(repeating: "c", count: 64)
        var index = ReleaseIndex(table: "", patches: [.init(target: h("1"), base: h("9"))])
        index.carriedPack = .init(from: from, pack: .init(hash: h("e"), size: 70, files: 2), releases: 1)
        index.deltaPacks = [.init(from: from, hash: h("d"), size: 5, bases: [h("9")])]
        // Nothing held: the carried pack first; holding its table, the delta pack; on another release, neither.
        let install = FormPlan(downloads: [one, two], table: table, index: index, holding: .init { _ in false })
        #expect(install.carried == index.carriedPack && install.pack == nil)
        let first = FormPlan(carried: try #require(install.carried), table: earlier, wanted: [h("1"), h("2"), h("9")])
        #expect(first.solid && first.pack?.hash == h("e"))
        #expect(first.sources[h("9")] == [.member(0), .plain] && first.sources[h("2")] == [.member(1), .plain])
        let then = FormPlan(downloads: [one], table: table, index: index, holding: .init(.init(digest: from, hashes: [h("9"), h("2")])) { $0 == h("9") })
        #expect(then.pack?.hash == h("d") && then.sources[h("1")]?.first == .member(0) && then.carried == nil)
        let update = FormPlan(downloads: [one], table: table, index: index, holding: .init { $0 == h("9") })
        #expect(update.carried == nil && update.pack == nil)
    }
}
