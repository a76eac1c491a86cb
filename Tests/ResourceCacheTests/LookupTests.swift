import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import TestOrigin

@Suite(.awaitsCleanups) struct LookupTests {
    @Test func shippedPresetAnswersOfflineAsCurrent() async throws {
        let f = try await Fixture.registered(preset: ["index.html": "shipped"])
        let r = try f.resolve("index.html?x=1#top", offline: true)
        #expect(r.source == .preset)
        #expect(r.stale == false)
        #expect(f.origin.requests.isEmpty)
    }

    @Test func missingPresetFileIsRefetchedFromTheRemote() async throws {
        let f = try await Fixture.registered()
        try f.writePreset([:], table: ["late.js": "late"])
        f.origin.publish(["late.js": "late"])
        let r = try f.resolve("late.js")
        #expect(r.source == .remote)
        #expect(f.content(r) == "late")
    }

    @Test func emptyCacheWithoutPresetFetchesTheTableOnFirstLookup() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["a.txt": "a"])
        let r = try f.resolve("a.txt")
        #expect(f.content(r) == "a")
    }

    @Test func notInTheTableIsNotFound() async throws {
        let f = try await Fixture.registered(preset: ["index.html": "x"])
        #expect(expectError(.notFound) { _ = try f.resolve("nope.html", offline: true) }?.code == .notFound)
        #expect(expectError(.notFound) { _ = try f.resolve("../preset/index.html", offline: true) }?.code == .notFound)
        #expect(expectError(.notFound) { _ = try f.resolve("%2e%2e/preset/index.html", offline: true) }?.code == .notFound)
    }

    @Test func originDownServesTheNewestCopyAsStaleAndStrictRefuses() async throws {
        var f = try await Fixture.registered()
        try f.release(["a.txt": "v1", "b.txt": "b"])
        // A new table is committed by hand-crafted means: sync v2 while a.txt fails would not
        // commit, so simulate "table says v2, a.txt not held" with a generation built from a
        // table whose a.txt object was then lost.
        try f.release(["a.txt": "v2", "b.txt": "b"])
        let current = GenerationStore(layout: f.settings.cache).current()!
        let hash = ContentHash(hex: TestOrigin.md5(Array("v2".utf8)))!
        unlink(current.filePath(try URIPath(validating: "a.txt")))
        unlink(f.settings.cache.object(hash))
        try await f.takeOriginDown()
        let r = try f.resolve("a.txt")
        #expect(r.stale == true)
        #expect(f.content(r) == "v1")
        #expect(r.warning != nil)
        #expect(expectError(.remote) { _ = try f.resolve("a.txt", strict: true) }?.code == .remote)
    }

    @Test func nothingHeldAndOriginDownIsARemoteError() async throws {
        var f = try await Fixture.registered()
        try f.writePreset([:], table: ["a.txt": "a"])
        try await f.takeOriginDown()
        #expect(expectError(.remote) { _ = try f.resolve("a.txt") }?.code == .remote)
        #expect(expectError(.remote) { _ = try f.resolve("a.txt", offline: true) }?.code == .remote)
    }

    @Test func refetchesAreThrottledByMinRefetch() async throws {
        var f = try await Fixture.registered()
        f.settings.minRefetch = 60
        try f.writePreset([:], table: ["a.txt": "a"])
        f.origin.publish(["b.txt": "b"])
        // The remote table does not list a.txt, the preset lacks the file: each lookup would refetch.
        _ = try? f.resolve("a.txt")
        _ = try? f.resolve("a.txt")
        _ = try? f.resolve("a.txt")
        #expect(f.origin.requests(for: "Routes.json").count == 1)
    }

    @Test func concurrentRefetchesShareOneRequest() async throws {
        var f = try await Fixture.registered()
        f.settings.minRefetch = 60
        try f.writePreset([:], table: ["a.txt": "a"])
        f.origin.publish(["a.txt": "a"])
        f.origin.inject(.delay(0.3), on: "Routes.json", times: 1)
        let resolver = f.resolver
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<4 {
                group.addTask { try resolver.resolve("a.txt").path }
            }
            for try await path in group { #expect(path.hasSuffix("/a.txt")) }
        }
        #expect(f.origin.requests(for: "Routes.json").count == 1)
        #expect(f.origin.requests(for: "a.txt").count == 1)
    }

    @Test func developModeServesTheFolderWithoutNetworkAndNeverEscapes() async throws {
        let f = try await Fixture.registered()
        let dev = f.root + "/dev"
        try FileManager.default.createDirectory(atPath: dev + "/js", withIntermediateDirectories: true)
        try Data("dev".utf8).write(to: URL(fileURLWithPath: dev + "/js/app.js"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: f.root + "/secret.txt"))
        try FileManager.default.createSymbolicLink(atPath: dev + "/escape.txt", withDestinationPath: f.root + "/secret.txt")
        try FileManager.default.createSymbolicLink(atPath: dev + "/up", withDestinationPath: f.root)
        try FileManager.default.createSymbolicLink(atPath: dev + "/inside.js", withDestinationPath: dev + "/js/app.js")
        let resolver = Resolver(settings: f.settings, developFolder: ServedFolder(root: dev))
        let r = try resolver.resolve("js/app.js")
        #expect(r.source == .develop)
        #expect(r.hash == nil)
        #expect(try resolver.resolve("inside.js").source == .develop)
        for hostile in ["escape.txt", "up/secret.txt", "../secret.txt", "js", "missing.js"] {
            #expect(throws: CenariusError.self) { try resolver.resolve(hostile) }
        }
        #expect(f.origin.requests.isEmpty)
    }

    @Test func presetSymlinksOutsideAreIgnored() async throws {
        let f = try await Fixture.registered()
        try Data("secret".utf8).write(to: URL(fileURLWithPath: f.root + "/secret.txt"))
        try f.writePreset([:], table: ["link.txt": "secret"])
        try FileManager.default.createSymbolicLink(atPath: f.root + "/preset/link.txt", withDestinationPath: f.root + "/secret.txt")
        #expect(throws: CenariusError.self) { try f.resolve("link.txt", offline: true) }
    }

    /// A preset file that is a link resolving inside the folder is served, verified and copied
    /// by the file it points to (files are otherwise opened without following links).
    @Test func presetSymlinksInsideAreServedVerifiedAndImported() async throws {
        let f = try await Fixture.registered()
        try f.writePreset(["js/a.js": "shared"], table: ["js/a.js": "shared", "js/b.js": "shared"])
        try FileManager.default.createSymbolicLink(atPath: f.root + "/preset/js/b.js", withDestinationPath: "a.js")
        #expect(f.content(try f.resolve("js/b.js", offline: true)) == "shared")
        let report = try Verifier(settings: f.settings).verify()
        #expect(report.isClean && report.presetFiles == 2 && report.presetMissing.isEmpty)
        // A sync whose table moves that content elsewhere copies it from the preset, link or not.
        try f.release(["moved.js": "shared"])
        #expect(f.fileRequests.isEmpty)
        #expect(f.content(try f.resolve("moved.js")) == "shared")
    }

    @Test func handedOutPathsSurviveASwitch() async throws {
        let f = try await Fixture.registered()
        try f.release(["a.txt": "v1"])
        let before = try f.resolve("a.txt")
        try f.release(["a.txt": "v2"])
        #expect(f.content(before) == "v1")
        #expect(f.content(try f.resolve("a.txt")) == "v2")
    }
}
