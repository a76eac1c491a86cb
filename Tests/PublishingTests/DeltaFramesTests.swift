import Foundation
@testable import Publishing
import RouteSync
import Testing

/// `DeltaFrames` on a folder remote: the patches (and form) of the head's delta pack are cut from the
/// pack when those asked are at least half of it, and read on their own otherwise, or when the pack
/// does not match its name. The objects on their own hold other bytes of the same sizes, so the
/// answer tells where each came from.
struct DeltaFramesTests {
    let root = NSTemporaryDirectory() + "delta-frames-" + UUID().uuidString

    static func text(_ name: String, lines: Int) -> [UInt8] {
        Array((0..<lines).map { "\(name): line \($0) of a module that changes little\n" }.joined().utf8)
    }

    static func entry(_ uri: String, _ bytes: [UInt8]) throws -> RouteEntry {
        RouteEntry(uri: try URIPath(validating: uri), hash: StreamingHasher.hash(bytes, .md5), size: Int64(bytes.count))
    }

    func write(_ bytes: [UInt8], _ key: String) throws {
        let path = root + "/" + key
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func patchesAreCutFromTheHeadsDeltaPackWhenItIsWorthReading() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (a, b, c) = (Self.text("a", lines: 400), Self.text("b", lines: 400), Self.text("c", lines: 10))
        let (a2, b2) = (a + Array("// a 2\n".utf8), b + Array("// b 2\n".utf8))
        var noise = SystemRandomNumberGenerator()
        let d = (0..<3_000).map { _ in UInt8.random(in: 0...255, using: &noise) }
        let old = try RouteTable(entries: [Self.entry("a.js", a), Self.entry("b.js", b), Self.entry("c.js", c)])
        let head = try RouteTable(entries: [Self.entry("a.js", a2), Self.entry("b.js", b2), Self.entry("c.js", c), Self.entry("d.bin", d)])
        // The files the old table lacks, in pack order: a.js and b.js patched from their old bytes, d.bin's form.
        let frames = [try Zstd.compress(a2, prefix: a), try Zstd.compress(b2, prefix: b), try Zstd.compress(d)]
        let pack = frames.flatMap { $0 }
        let hashes = [a, b, a2, b2, d].map { StreamingHasher.hash($0, .md5) }
        let keys = [ReleaseIndex.patchPath(.init(target: hashes[2], base: hashes[0])), ReleaseIndex.patchPath(.init(target: hashes[3], base: hashes[1])),
                    ReleaseIndex.formPath(hashes[4])]
        let packHash = StreamingHasher.hash(pack, .md5)
        try write(pack, ReleaseIndex.packPath(packHash))
        for (key, frame) in zip(keys, frames) { try write([UInt8](repeating: 0x61, count: frame.count), key) }
        let oldBytes = old.serialized()
        var index = ReleaseIndex(table: ReleaseIndex.tableDigest(head.serialized()))
        index.deltaPacks = [ReleaseIndex.DeltaPack(from: ReleaseIndex.tableDigest(oldBytes), hash: packHash, size: Int64(pack.count),
                                                   bases: [hashes[0], hashes[1], nil])]
        let deltaFrames = DeltaFrames(index: index, table: head, olds: [Bases.Release(tableBytes: oldBytes, table: old)])
        let folder = FolderDestination(root: root)
        let read = { (asked: [String]) throws in try deltaFrames.read(asked, from: folder, objects: try folder.list(prefix: ""), limit: 1 << 20) }

        #expect(try read(keys) == Dictionary(uniqueKeysWithValues: zip(keys, frames)), "all three are most of the pack: cut from it")
        #expect(try read([keys[0]]) == [keys[0]: [UInt8](repeating: 0x61, count: frames[0].count)], "one small patch: read on its own")
        #expect(try read([keys[0], "Routes.json"]).count == 1, "a key no frame holds is read as it is (here, missing)")
        var damaged = pack
        damaged[pack.count / 2] ^= 0xFF
        try write(damaged, ReleaseIndex.packPath(packHash))
        #expect(try read(keys) == Dictionary(uniqueKeysWithValues: zip(keys, frames.map { [UInt8](repeating: 0x61, count: $0.count) })),
                "a pack that is not its name's bytes gives nothing: each read on its own")
    }
}
