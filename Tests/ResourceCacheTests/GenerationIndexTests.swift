import Foundation
import Testing
@testable import ResourceCache
import RouteSync

@Suite struct GenerationIndexTests {
    @Test func binarySearchFindsEveryEntryAndNothingElse() throws {
        let root = NSTemporaryDirectory() + "cenarius-index-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var entries: [RouteEntry] = []
        // "a" and "a/b" together are a table no file system holds: "ab" sorts beside them instead.
        var uris = ["ab", "a/b", "a b", "Z", "é/ü.png", "😀", "zzz", "a.b", "a-b", "A"]
        for i in 0..<3000 { uris.append("assets/d\(i % 37)/file-\(i).js") }
        for (i, uri) in uris.enumerated() {
            entries.append(RouteEntry(uri: try URIPath(validating: uri), hash: ContentHash(hex: String(format: "%032x", i))!))
        }
        let table = try RouteTable(entries: entries)
        let presetServed: Set<URIPath> = [try URIPath(validating: "a b"), try URIPath(validating: "😀")]
        let generation = Generation(number: 1, path: root)
        try GenerationIndex.write(table, fromPreset: presetServed, presetIdentity: "42-1.0-7", to: GenerationIndex.path(generation))
        for entry in table.entries {
            let hit = GenerationIndex.lookup(entry.uri, in: generation)
            #expect(hit == .present(entry.hash, fromPreset: presetServed.contains(entry.uri), presetIdentity: "42-1.0-7"), "\(entry.uri)")
        }
        for missing in ["", "0", "a/c", "assets/d1/file-1.jss", "zzzz", "é", "assets"] where !missing.isEmpty {
            #expect(GenerationIndex.lookup(try URIPath(validating: missing), in: generation) == .absent, "\(missing)")
        }
        #expect(GenerationIndex.lookup(try URIPath(validating: "a"), in: Generation(number: 2, path: root + "/none")) == nil)
    }
}
