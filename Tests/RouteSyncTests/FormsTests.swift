import Foundation
import Testing
@testable import RouteSync
@testable import Transport

/// Text that compresses like a minified bundle: many distinct words, some repetition.
func bundle(seed: UInt64, bytes: Int) -> [UInt8] {
    var state = seed
    var out: [UInt8] = []
    out.reserveCapacity(bytes)
    let words = ["function", "return", "const", "let", "this", "props", "state", "render", "=>", "{", "}", "(", ")", ";", "null", "undefined"]
    while out.count < bytes {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let word = words[Int(state >> 60)]
        out.append(contentsOf: word.utf8)
        out.append(contentsOf: String(state >> 48 & 0xFFF, radix: 36).utf8)
        out.append(UInt8(ascii: " "))
    }
    return Array(out.prefix(bytes))
}

@Suite struct FormsTests {
    let folder = NSTemporaryDirectory() + "cenarius-forms-" + UUID().uuidString

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func decode(_ form: [UInt8], base: [UInt8]? = nil, limit: Int64, expected: [UInt8]) throws -> Result<Int64, FormFailure> {
        let source = try write(form, "form")
        let basePath = try base.map { try write($0, "base") }
        let decoding = FormDecoding(source: source, base: basePath, limit: limit, expected: StreamingHasher.hash(expected, .md5))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do { return .success(try decoding.decode(to: folder + "/out")) } catch { return .failure(error) }
    }

    @Test func compressedFormRoundTrips() throws {
        let file = bundle(seed: 1, bytes: 300_000)
        let form = try Zstd.compress(file)
        #expect(form.count < file.count / 2)
        #expect(try decode(form, limit: Int64(file.count), expected: file) == .success(Int64(file.count)))
    }

    @Test func patchRoundTripsAndIsSmall() throws {
        let old = bundle(seed: 2, bytes: 500_000)
        var new = old
        new.replaceSubrange(250_000..<250_010, with: Array("CHANGED!!!".utf8))
        new.insert(contentsOf: Array("/* v2 */".utf8), at: 0)
        let patch = try Zstd.compress(new, prefix: old)
        #expect(patch.count < 1000)
        #expect(try decode(patch, base: old, limit: Int64(new.count), expected: new) == .success(Int64(new.count)))
    }

    @Test func patchAgainstTheWrongBaseFails() throws {
        let old = bundle(seed: 3, bytes: 100_000)
        let other = bundle(seed: 4, bytes: 100_000)
        let new = old + Array("tail".utf8)
        let patch = try Zstd.compress(new, prefix: old)
        guard case .failure(let failure) = try decode(patch, base: other, limit: Int64(new.count), expected: new) else {
            Issue.record("decoded against the wrong base")
            return
        }
        switch failure {
        case .wrongHash, .corrupt: break
        default: Issue.record("unexpected failure \(failure)")
        }
    }

    @Test func bombStopsAtTheLimit() throws {
        // 64 MiB of zeros in a few KiB, with a 512 KiB window (level 1) the decoder accepts for a
        // 1 MiB file: decoding must stop at the limit, not write it all.
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let bomb = try Zstd.compress(zeros, level: 1)
        #expect(bomb.count < 64 << 10)
        #expect(try decode(bomb, limit: 1 << 20, expected: Array(zeros.prefix(1 << 20))) == .failure(.overrun(limit: 1 << 20)))
        // With a small limit the frame's window alone is refused, before any output.
        guard case .failure(.corrupt) = try decode(bomb, limit: 4096, expected: []) else {
            Issue.record("a frame with a window above the bound was accepted")
            return
        }
    }

    @Test func truncatedCorruptAndTrailingFormsFail() throws {
        let file = bundle(seed: 5, bytes: 200_000)
        let form = try Zstd.compress(file)
        #expect(try decode(Array(form.prefix(form.count / 2)), limit: Int64(file.count), expected: file) == .failure(.truncated))
        #expect(try decode(form + [1, 2, 3], limit: Int64(file.count), expected: file) == .failure(.truncated))
        var corrupt = form
        corrupt[form.count / 2] ^= 0xFF
        corrupt[form.count / 2 + 1] ^= 0xFF
        if case .success = try decode(corrupt, limit: Int64(file.count), expected: file) { Issue.record("a corrupt form decoded") }
        let wrong = try Zstd.compress(bundle(seed: 6, bytes: 1000))
        guard case .failure(.wrongHash) = try decode(wrong, limit: Int64(file.count), expected: file) else {
            Issue.record("another file's form passed")
            return
        }
    }

    @Test func windowAboveTheBoundIsRefused() throws {
        // A patch whose window covers 2 MiB of base cannot be decoded by a decoder allowed 1 MiB.
        #expect(FormDecoding.windowLogMax(limit: 1 << 20, baseSize: 0) == 20)
        #expect(FormDecoding.windowLogMax(limit: 1 << 20, baseSize: 1 << 20) == 21)
        #expect(FormDecoding.windowLogMax(limit: 100, baseSize: 0) == 10)
    }

    @Test func hashedNamesShareAStem() {
        #expect(BaseMatch.stem("assets/main.1a2b3c4d.js") == BaseMatch.stem("assets/main.9f8e7d6c.js"))
        #expect(BaseMatch.stem("assets/index-BrX8s9aK.js") == BaseMatch.stem("assets/index-Cq1dE0fZ.js"))
        #expect(BaseMatch.stem("static/js/2.0d1e2f3a.chunk.js") == BaseMatch.stem("static/js/2.99aa88bb.chunk.js"))
        #expect(BaseMatch.stem("a/main.js") != BaseMatch.stem("b/main.js"))
        // Vite's 8-character base64url hashes, which may hold `-` and `_` (streamlit's static folder).
        #expect(BaseMatch.stem("static/js/Check.esm.C0_5iXfI.js") == BaseMatch.stem("static/js/Check.esm.Bx9Lq2mA.js"))
        #expect(BaseMatch.stem("static/media/KaTeX_Math-Italic.t53AETM-.woff2") == BaseMatch.stem("static/media/KaTeX_Math-Italic.Q8vK2pL0.woff2"))
        #expect(BaseMatch.stem("static/media/balloon-4.mbtFrzxf.png") == BaseMatch.stem("static/media/balloon-4.Zq3rTyWx.png"))
        #expect(BaseMatch.stem("static/js/index.DN4-Aiio.js") != BaseMatch.stem("static/js/Audio.DN4-Aiio.js"))
        #expect(BaseMatch.stem("static/js/vendor.bootstrap.js") != BaseMatch.stem("static/js/vendor.jquery1.js"))
        #expect(BaseMatch.stem("main.js") != BaseMatch.stem("vendor.js"))
        #expect(BaseMatch.stem("jquery-3.7.1.min.js") == "jquery-3.7.1.min.js")
    }

    @Test func baseIsTheSameUriElseTheClosestStem() throws {
        func entry(_ uri: String, _ size: Int64, _ fill: Character) throws -> RouteEntry {
            RouteEntry(uri: try URIPath(validating: uri), hash: ContentHash(hex: String(repeating: fill, count: 32))!, size: size)
        }
        let old = try RouteTable(entries: [try entry("app.js", 10, "a"), try entry("main.1a2b3c4d.js", 1000, "b"), try entry("main.5e6f7a8b.js", 5000, "c")])
        let match = BaseMatch(old)
        #expect(try match.base(for: URIPath(validating: "app.js"), size: 99)?.hash.hex.first == "a")
        #expect(try match.base(for: URIPath(validating: "main.0d0d0d0d.js"), size: 4500)?.hash.hex.first == "c")
        #expect(try match.base(for: URIPath(validating: "other.js"), size: 10) == nil)
    }

    @Test func indexRoundTripsAndRejectsNonsense() throws {
        let a = ContentHash(hex: String(repeating: "a", count: 32))!, b = ContentHash(hex: String(repeating: "b", count: 32))!
        let c = ContentHash(hex: String(repeating: "c", count: 32))!
        let index = ReleaseIndex(table: String(repeating: "e", count: 64), plain: [c],
                                 patches: [.init(target: a, base: b)], pack: .init(hash: c, size: 100, files: 3))
        #expect(try ReleaseIndex.parse(index.serialized(), source: "i") == index)
        // Form sizes: a patch's where it has one (the smallest), else the compressed form's; none
        // where the counts do not match what they describe.
        let two = try RouteTable(entries: [RouteEntry(uri: try URIPath(validating: "a.js"), hash: a, size: 900),
                                           RouteEntry(uri: try URIPath(validating: "c.js"), hash: c, size: 700)])
        var sized = index
        sized.addPatch(.init(target: a, base: c), size: 40)
        sized.formSizes = two.packOrder.map { $0.hash == a ? 300 : 0 }
        #expect(sized.patchSizes == [0, 40])
        let read = try ReleaseIndex.parse(sized.serialized(), source: "i")
        #expect(read == sized)
        #expect(read.formBytes(for: two) == [a: 40])
        sized.formSizes = [300]
        #expect(sized.formBytes(for: two) == [a: 40])
        sized.patchSizes = []
        #expect(sized.formBytes(for: two).isEmpty)
        #expect(index.formBytes(for: two).isEmpty)
        #expect(ReleaseIndex.patchPath(.init(target: a, base: b)) == "_cenarius/p/\(a.hex)-\(b.hex).zst")
        let negative = Array(#"{"format": "cenarius-forms-1", "table": "x", "pack": {"form": "\#(a.hex)", "size": -1, "files": 2}}"#.utf8)
        #expect(throws: CenariusError.self) { try ReleaseIndex.parse(negative, source: "i") }
        let triple = Array(#"{"format": "cenarius-forms-1", "table": "x", "patches": [["\#(a.hex)", "\#(b.hex)", "\#(c.hex)"]]}"#.utf8)
        #expect(throws: CenariusError.self) { try ReleaseIndex.parse(triple, source: "i") }
        #expect(throws: CenariusError.self) { try ReleaseIndex.parse(Array("{}".utf8), source: "i") }
        // A carried pack names its table by SHA-256; the object keys of a release include that table.
        var carrying = index
        carrying.carriedPack = .init(from: String(repeating: "f", count: 64), pack: .init(hash: b, size: 90, files: 3), releases: 2)
        #expect(try ReleaseIndex.parse(carrying.serialized(), source: "i") == carrying)
        let table = try RouteTable(entries: [RouteEntry(uri: try URIPath(validating: "a.js"), hash: a, size: 1)])
        #expect(carrying.objects(for: table).contains("_cenarius/t/\(String(repeating: "f", count: 64)).json"))
        #expect(carrying.objects(for: table).contains(ReleaseIndex.packPath(b)))
        let unnamed = Array(#"{"format": "cenarius-forms-1", "table": "x", "carriedPack": {"form": "\#(a.hex)", "size": 1, "files": 2}}"#.utf8)
        #expect(throws: CenariusError.self) { try ReleaseIndex.parse(unnamed, source: "i") }
    }

    /// A site whose files the solid pack alone holds lists the few files with a form, not every
    /// plain one; both spellings read back to the same answer for every file of the table.
    @Test func anIndexNamesTheFewerOfItsPlainAndCompressedFiles() throws {
        let hashes = (0..<40).map { ContentHash(hex: String(format: "%032x", $0 + 1))! }
        let table = Set(hashes)
        let formed = Set(hashes.prefix(3))
        var index = ReleaseIndex(table: String(repeating: "e", count: 64), plain: PlainFiles(table.subtracting(formed)))
        index.plain = index.plain.compacted(for: table)
        let text = String(decoding: index.serialized(), as: UTF8.self)
        #expect(text.contains("\"compressed\": [") && !text.contains("\"plain\""))
        #expect(index.serialized().count < 400)
        let read = try ReleaseIndex.parse(index.serialized(), source: "i")
        for hash in hashes { #expect(read.plain.contains(hash) == !formed.contains(hash)) }
        // A file made plain later (its form dropped) reads as plain in either spelling.
        var changed = read
        changed.plain.insert(hashes[0])
        #expect(changed.plain.contains(hashes[0]) && !changed.plain.contains(hashes[1]))
        // Mostly compressed: the plain ones are listed, as every earlier index did.
        let few = PlainFiles(Set(hashes.suffix(2))).compacted(for: table)
        #expect(String(decoding: ReleaseIndex(table: "x", plain: few).serialized(), as: UTF8.self).contains("\"plain\": ["))
        for hash in hashes { #expect(few.contains(hash) == hashes.suffix(2).contains(hash)) }
        #expect(read.objects(for: try RouteTable(entries: [RouteEntry(uri: try URIPath(validating: "a.js"), hash: hashes[5], size: 1)]))
            == [ReleaseIndex.plainPath(hashes[5])])
    }

    @Test func packFramesAreFoundByDecoding() throws {
        let files = [bundle(seed: 7, bytes: 50_000), bundle(seed: 8, bytes: 10), bundle(seed: 9, bytes: 70_000)]
        let pack = try files.flatMap { try Zstd.compress($0) }
        let source = try write(pack, "pack")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var offset: Int64 = 0
        for file in files {
            let decoding = FormDecoding(source: source, offset: offset, framesFollow: true, limit: 1 << 20, expected: StreamingHasher.hash(file, .md5))
            let (size, end) = try decoding.decodeFrame(to: folder + "/out")
            #expect(size == Int64(file.count))
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/out"))) == file)
            offset = end
        }
        #expect(offset == Int64(pack.count))
    }

    /// A pack's frames told apart from their headers alone, as `publish` cuts a delta pack's patches
    /// out of it without their bases: compressed, raw (noise) and RLE blocks, a patch, a frame of
    /// nothing, a file of several blocks; a cut short or trailing pack is refused.
    @Test func packFramesAreFoundFromTheirHeaders() throws {
        var noise = SystemRandomNumberGenerator()
        let base = bundle(seed: 10, bytes: 300_000)
        let frames = [try Zstd.compress(bundle(seed: 11, bytes: 400_000)), try Zstd.compress((0..<5_000).map { _ in UInt8.random(in: 0...255, using: &noise) }),
                      try Zstd.compress([UInt8](repeating: 7, count: 200_000)), try Zstd.compress(base + Array("tail".utf8), prefix: base),
                      try Zstd.compress([]), try Zstd.compress(bundle(seed: 12, bytes: 10))]
        let pack = frames.flatMap { $0 }
        #expect(Zstd.frameLengths(pack) == frames.map(\.count))
        #expect(Zstd.frameLengths(Array(pack.dropLast())) == nil)
        #expect(Zstd.frameLengths(pack + [0]) == nil)
        #expect(Zstd.frameLengths([]) == [])
    }

    @Test func signatureCoversTheIndex() throws {
        let (key, publicKey) = SigningKeys.generate()
        let (_, other) = SigningKeys.generate()
        let table = Array("[]".utf8), index = Array("{\"format\": \"cenarius-forms-1\"}".utf8)
        var signed = try TableSignature.sign(table: table, version: 3, with: key)
        try signed.signForms(index: index, table: table, with: key)
        let signature = try TableSignature.parse(signed.serialized(), source: "s")
        // The table's signature is untouched (still the first format older devices verify).
        #expect(signature.isFirstFormat)
        try signature.verify(table: table, with: publicKey, source: "t")
        #expect(signature.formsSigners(index: index, table: table, among: [publicKey]) == 1)
        #expect(signature.formsSigners(index: index, table: table, among: [other]) == 0)
        #expect(signature.formsSigners(index: index + [0x20], table: table, among: [publicKey]) == 0)
        #expect(signature.formsSigners(index: index, table: table + [0x20], among: [publicKey]) == 0)
        let unsigned = try TableSignature.sign(table: table, version: 3, with: key)
        #expect(unsigned.formsSigners(index: index, table: table, among: [publicKey]) == 0)
    }

    @Test func formPolicyMovesOnUntilThePlainFile() {
        let policy = FormPolicy()
        #expect(policy.decide(remaining: 2) == .next)
        #expect(policy.decide(remaining: 0) == .giveUp)
        #expect(policy.downloads(TransferOptions()).attempts == 1)
    }
}

/// The solid pack (a first install's one stream): made and cut back into its files; what is
/// wrong with one file fails it and those after it, and the files before it stay.
@Suite struct SolidPackTests {
    let files = [bundle(seed: 1, bytes: 40_000), bundle(seed: 2, bytes: 9_000), [], Array("last\n".utf8)]

    func members(_ folder: String, limit: Int64 = 1 << 20, hashes: [ContentHash]? = nil) -> [SolidPack.Member] {
        files.enumerated().map { i, file in
            SolidPack.Member(expected: hashes?[i] ?? StreamingHasher.hash(file, .md5), limit: limit, destination: folder + "/\(i)")
        }
    }

    @Test func filesComeBackWholeAndSmallerThanPerFileFrames() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("solid-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pack = try SolidPack.make(files)
        let perFile = try files.reduce(0) { $0 + (try Zstd.compress($1)).count }
        #expect(pack.count < perFile, "\(pack.count) ≥ \(perFile)")
        try FileSystem.writeAtomically(pack, to: folder + "/pack")
        let results = SolidPack.decode(folder + "/pack", growing: nil, members: members(folder))
        for (i, result) in results.enumerated() {
            #expect((try? result.get()) == Int64(files[i].count))
            #expect(FileManager.default.contents(atPath: folder + "/\(i)") == Data(files[i]))
        }
    }

    @Test func aWrongFileFailsItAndTheRestAndKeepsThoseBefore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("solid-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileSystem.writeAtomically(try SolidPack.make(files), to: folder + "/pack")
        var hashes = files.map { StreamingHasher.hash($0, .md5) }
        hashes[1] = StreamingHasher.hash(Array("another".utf8), .md5)
        let results = SolidPack.decode(folder + "/pack", growing: nil, members: members(folder, hashes: hashes))
        #expect((try? results[0].get()) == 40_000)
        #expect(results.dropFirst().allSatisfy { (try? $0.get()) == nil })
        #expect(!FileManager.default.fileExists(atPath: folder + "/1"), "a file that is not what its hash says is removed")
        // A limit below a file's length stops the stream there.
        let limited = SolidPack.decode(folder + "/pack", growing: nil, members: members(folder, limit: 10_000))
        #expect((try? limited[0].get()) == nil)
        // Cut short: the files whole before the cut (zstd gives them block by block, 128 KiB at a time) are kept.
        let two = [bundle(seed: 3, bytes: 200_000), bundle(seed: 4, bytes: 200_000)]
        let pack = try SolidPack.make(two)
        try FileSystem.writeAtomically(Array(pack.prefix(pack.count * 3 / 4)), to: folder + "/cut")
        let cut = SolidPack.decode(folder + "/cut", growing: nil, members: two.enumerated().map { i, file in
            SolidPack.Member(expected: StreamingHasher.hash(file, .md5), limit: 1 << 20, destination: folder + "/cut-\(i)")
        })
        #expect((try? cut[0].get()) == 200_000 && (try? cut[1].get()) == nil)
        #expect(!FileManager.default.fileExists(atPath: folder + "/cut-1"), "the file cut short is removed")
    }
}
