import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import TestOrigin

/// `resolve` before any sync answers from an index of the preset's table (F), and only while
/// that index describes the table on disk.
@Suite(.awaitsCleanups) struct PresetIndexTests {
    @Test func firstLookupIndexesThePresetAndLaterOnesUseIt() async throws {
        let f = try await Fixture.registered(preset: ["index.html": "shipped", "js/app.js": "app"])
        #expect(!FileManager.default.fileExists(atPath: f.settings.cache.presetIndex))
        let first = try f.resolve("index.html", offline: true)
        #expect(first.source == .preset)
        #expect(FileManager.default.fileExists(atPath: f.settings.cache.presetIndex))

        // An index with the table's identity is what answers: a hash planted in it comes back.
        let identity = try #require(PresetIndex.identity(f.settings.preset))
        let planted = String(repeating: "ab", count: 16)
        try writeIndex(f, identity: identity, lines: ["index.html\t\(planted)\tP", "js/app.js\t\(planted)\tP"])
        #expect(try f.resolve("js/app.js", offline: true).hash == planted)
        #expect(f.content(try f.resolve("js/app.js", offline: true)) == "app")
        #expect(expectError(.notFound) { _ = try f.resolve("missing.js", offline: true) }?.message.contains("preset") == true)
        #expect(f.origin.requests.isEmpty)
    }

    @Test func anIndexOfAnotherTableIsNeverUsed() async throws {
        let f = try await Fixture.registered(preset: ["index.html": "v1"])
        _ = try f.resolve("index.html", offline: true)
        let planted = String(repeating: "cd", count: 16)
        try writeIndex(f, identity: "1-2.3-4.5-6-7 /elsewhere/Routes.json", lines: ["index.html\t\(planted)\tP"])
        #expect(try f.resolve("index.html", offline: true).hash == TestOrigin.md5(Array("v1".utf8)))

        // The table replaced (a new app version): its new entries are answered, and re-indexed.
        try f.writePreset(["index.html": "v2", "new.html": "new"])
        #expect(try f.resolve("index.html", offline: true).hash == TestOrigin.md5(Array("v2".utf8)))
        let identity = try #require(PresetIndex.identity(f.settings.preset))
        #expect(PresetIndex.lookup(try URIPath(validating: "new.html"), identity: identity, layout: f.settings.cache)
            == .present(ContentHash(hex: TestOrigin.md5(Array("new".utf8)))!, fromPreset: true, presetIdentity: identity))
    }

    @Test func aSyncedGenerationTakesOverFromThePresetIndex() async throws {
        let f = try await Fixture.registered(preset: ["index.html": "shipped"])
        _ = try f.resolve("index.html", offline: true)
        try f.release(["index.html": "synced"])
        let r = try f.resolve("index.html", offline: true)
        #expect(r.source == .cache)
        #expect(f.content(r) == "synced")
    }

    private func writeIndex(_ f: Fixture, identity: String, lines: [String]) throws {
        let text = "\(GenerationIndex.magic) \(identity)\n" + lines.sorted().map { $0 + "\n" }.joined()
        try Data(text.utf8).write(to: URL(fileURLWithPath: f.settings.cache.presetIndex))
    }
}
