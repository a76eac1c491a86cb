import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import Transport
import TestOrigin

@Suite(.awaitsCleanups) struct SyncTests {
    @Test func firstSyncDownloadsEverythingAndResolvesFromCache() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["index.html": "<h1>v1</h1>", "js/app.js": "console.log(1)"])
        let report = try f.sync()
        #expect(report.outcome == .committed)
        #expect(report.downloadedFiles == 2)
        #expect(report.generation == 1)
        let r = try f.resolve("js/app.js")
        #expect(r.source == .cache)
        #expect(r.stale == false)
        #expect(r.path.hasSuffix("/js/app.js"))
        #expect(f.content(r) == "console.log(1)")
    }

    /// ext4 never shrinks a directory: a `tmp/` that once held thousands of downloads would cost
    /// every later sync a read of all its blocks. Emptied, it is made anew.
    @Test func aTmpFolderGrownLargeIsMadeAnew() async throws {
        let f = try await Fixture.registered()
        try f.release(["index.html": "v1"])
        let tmp = f.settings.cache.tmp
        let name = String(repeating: "x", count: 40)
        for i in 0..<10_000 { _ = FileManager.default.createFile(atPath: "\(tmp)/\(name)-\(i)", contents: nil) }
        let grown = try #require(try FileManager.default.attributesOfItem(atPath: tmp)[.size] as? Int)
        #expect(grown > Syncer.largeFolderBytes, "\(grown): the test's folder did not grow (a file system that shrinks folders)")
        #expect(try f.sync().outcome == .notModified)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: tmp)[.size] as? Int)
        #expect(size <= 16 << 10, "tmp/ is \(size) bytes after it was emptied")
    }

    @Test func unchangedTableCostsOneConditionalRequest() async throws {
        let f = try await Fixture.registered()
        try f.release(["a.txt": "a", "b.txt": "b"])
        f.origin.resetRequests()
        let report = try f.sync()
        #expect(report.outcome == .notModified)
        #expect(f.origin.gets.count == 1)
        #expect(f.origin.gets.first?.headers["if-none-match"] != nil)
        #expect(f.fileRequests.isEmpty)
    }

    @Test func sameTableWithoutValidatorsDoesNoFileWork() async throws {
        let f = try await Fixture.registered()
        f.origin.setValidators(false)
        try f.release(["a.txt": "a"])
        f.origin.resetRequests()
        let report = try f.sync()
        #expect(report.outcome == .unchanged)
        #expect(f.fileRequests.isEmpty)
    }

    @Test func presetFilesWithTheSameHashAreNotDownloaded() async throws {
        let f = try await Fixture.registered(preset: ["index.html": "same", "old.js": "old"])
        f.origin.publish(["index.html": "same", "old.js": "new"])
        let report = try f.sync()
        #expect(report.servedFromPreset == 1)
        #expect(f.fileRequests == ["old.js"])
        #expect(try f.resolve("index.html").source == .preset)
        let changed = try f.resolve("old.js")
        #expect(changed.source == .cache)
        #expect(f.content(changed) == "new")
    }

    @Test func presetFileWithAnotherHashIsNotServedAsCurrent() async throws {
        // The preset's table claims the right hash, but the file on disk is a different build.
        let f = try await Fixture.registered()
        try f.writePreset(["app.js": "stale build"], table: ["app.js": "v2"])
        try f.release(["app.js": "v3"])
        let r = try f.resolve("app.js")
        #expect(r.source == .cache)
        #expect(f.content(r) == "v3")
    }

    @Test func sameContentUnderTwoUrisIsDownloadedOnce() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["a/logo.png": "PNG", "b/logo.png": "PNG", "c.txt": "c"])
        let report = try f.sync()
        #expect(report.downloadedFiles == 2)
        #expect(f.content(try f.resolve("a/logo.png")) == "PNG")
        #expect(f.content(try f.resolve("b/logo.png")) == "PNG")
    }

    @Test func contentInThePresetUnderAnotherUriIsCopiedNotDownloaded() async throws {
        let f = try await Fixture.registered(preset: ["old/name.css": "body{}"])
        f.origin.publish(["new/name.css": "body{}"])
        let report = try f.sync()
        #expect(report.importedFromPreset == 1)
        #expect(f.fileRequests.isEmpty)
        #expect(f.content(try f.resolve("new/name.css")) == "body{}")
    }

    @Test func corruptFileLeavesThePreviousGenerationInForceAndOnlyMissingFilesAreRefetched() async throws {
        let f = try await Fixture.registered()
        try f.release(["a.js": "a1", "b.js": "b1", "c.js": "c1"])
        f.origin.publish(["a.js": "a2", "b.js": "b2", "c.js": "c1"])
        f.origin.inject(.corrupt, on: "b.js")
        let error = expectError(.integrity) { _ = try f.sync() }
        #expect(error?.code == .integrity)
        #expect(error?.message.contains("b.js") == true)
        // Old set, not a mix.
        #expect(f.content(try f.resolve("a.js", offline: true)) == "a1")
        #expect(f.content(try f.resolve("b.js", offline: true)) == "b1")
        #expect(GenerationStore(layout: f.settings.cache).current()?.number == 1)
        f.origin.clearFaults()
        f.origin.resetRequests()
        let report = try f.sync()
        #expect(report.outcome == .committed)
        // a.js was verified during the failed sync and kept (G3): only b.js is fetched again.
        #expect(f.fileRequests == ["b.js"])
        #expect(f.content(try f.resolve("a.js")) == "a2")
        #expect(f.content(try f.resolve("b.js")) == "b2")
    }

    /// The body buffer is sized from Content-Length; more than that must still reach the file.
    @Test func aBodyLongerThanItsContentLengthIsKeptWhole() async throws {
        let f = try await Fixture.registered()
        let bodies = ["small.js": String(repeating: "ab", count: 3_000), "large.bin": String(repeating: "0123456789", count: 30_000)]
        f.origin.publish(bodies)
        for path in bodies.keys { f.origin.inject(.chunkedUnderstated, on: path) }
        let report = try f.sync()
        #expect(report.outcome == .committed)
        for (path, body) in bodies { #expect(f.content(try f.resolve(path, offline: true)) == body) }
    }

    @Test func truncatedBodiesAreRetriedThenFailWithARemoteError() async throws {
        let f = try await Fixture.registered()
        f.origin.setValidators(false)
        f.origin.publish(["big.bin": String(repeating: "x", count: 100_000)])
        f.origin.inject(.truncate, on: "big.bin")
        let error = expectError(.remote) { _ = try f.sync() }
        #expect(error?.code == .remote)
        #expect(f.fileRequests.count == 3)
        #expect(GenerationStore(layout: f.settings.cache).current() == nil)
    }

    @Test func interruptedDownloadResumesWithRangeAndIfRange() async throws {
        let f = try await Fixture.registered()
        let body = String(repeating: "0123456789", count: 20_000)
        f.origin.publish(["big.bin": body])
        f.origin.inject(.truncate, on: "big.bin", times: 1)
        let report = try f.sync()
        let requests = f.origin.requests(for: "big.bin")
        #expect(requests.count == 2)
        #expect(requests[1].headers["range"] == "bytes=\(body.count / 2)-")
        #expect(requests[1].headers["if-range"] != nil)
        #expect(report.downloadedBytes == Int64(body.count))
        #expect(f.content(try f.resolve("big.bin")) == body)
    }

    @Test func emptyAndBufferSizedFilesArriveIntact() async throws {
        let f = try await Fixture.registered()
        // Empty, exactly one write buffer, one byte over: the whole-body and the streamed paths.
        let files = ["empty.txt": "", "full.bin": String(repeating: "x", count: 64 << 10),
                     "over.bin": String(repeating: "y", count: (64 << 10) + 1), "small.css": "a{}"]
        f.origin.publish(files)
        let report = try f.sync()
        #expect(report.downloadedFiles == files.count)
        for (uri, body) in files {
            #expect(f.content(try f.resolve(uri)) == body, "\(uri)")
        }
    }

    @Test func transientServerErrorsAreRetried() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["a.txt": "a"])
        f.origin.inject(.status(500), on: "a.txt", times: 1)
        f.origin.inject(.drop, on: "Routes.json", times: 1)
        _ = try f.sync()
        #expect(f.origin.requests(for: "a.txt").count == 2)
        #expect(f.origin.requests(for: "Routes.json").count == 2)
    }

    @Test func retryAfterIsHonoured() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["a.txt": "a"])
        f.origin.inject(.status(429, retryAfter: "1"), on: "a.txt", times: 1)
        let started = Date()
        _ = try f.sync()
        #expect(Date().timeIntervalSince(started) >= 0.9)
        #expect(f.origin.requests(for: "a.txt").count == 2)
    }

    @Test func notFoundFileFailsWithoutRetry() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["a.txt": "a"])
        f.origin.remove("a.txt")
        let error = expectError(.remote) { _ = try f.sync() }
        #expect(error?.message.contains("HTTP 404") == true)
        #expect(f.origin.requests(for: "a.txt").count == 1)
    }

    @Test func hostileTablesAreRejectedWholeAndTheOldTableStays() async throws {
        let f = try await Fixture.registered()
        try f.release(["a.txt": "a"])
        f.origin.publish(["a.txt": "changed"], extraEntries: #"{"uri": "../../etc/passwd", "hash": "0123456789abcdef0123456789abcdef"}"#)
        f.origin.resetRequests()
        #expect(expectError(.integrity) { _ = try f.sync() }?.code == .integrity)
        #expect(f.fileRequests.isEmpty)
        #expect(f.content(try f.resolve("a.txt", offline: true)) == "a")
        #expect(!FileManager.default.fileExists(atPath: f.root + "/etc"))
    }

    @Test func oversizedBodiesAreRefused() async throws {
        var f = try await Fixture.registered()
        f.settings.transfer.maxFileSize = 1000
        f.origin.publish(["big.bin": String(repeating: "x", count: 5000)])
        let error = expectError(.integrity) { _ = try f.sync() }
        #expect(error?.message.contains("max-file-size") == true)
    }

    @Test func endlessBodyWithoutLengthIsCappedAndStalledBodyTimesOut() async throws {
        var f = try await Fixture.registered()
        f.settings.transfer.maxFileSize = 1 << 20
        f.settings.transfer.timeout = 1
        f.settings.transfer.attempts = 1
        f.origin.publish(["endless.bin": "x", "stall.bin": "y"])
        f.origin.inject(.endless, on: "endless.bin")
        f.origin.inject(.stall, on: "stall.bin")
        let error = expectError(.integrity) { _ = try f.sync() }
        #expect(error?.message.contains("endless.bin") == true)
        #expect(error?.message.contains("1 more failed") == true)
    }

    @Test func redirectsToOtherSchemesAreRefused() async throws {
        let f = try await Fixture.registered()
        f.origin.publish(["a.txt": "a"])
        f.origin.inject(.redirect("file:///etc/passwd"), on: "a.txt")
        #expect(expectError(.remote) { _ = try f.sync() }?.code == .remote)
    }

    @Test func garbageCollectionKeepsCurrentPlusOne() async throws {
        var f = try await Fixture.registered()
        f.settings.grace = 0
        for version in 1...4 {
            try f.release(["a.txt": "v\(version)"])
        }
        let store = GenerationStore(layout: f.settings.cache)
        #expect(store.all().map(\.number) == [4, 3])
        #expect(ObjectStore(layout: f.settings.cache).all().count == 2)
    }

    @Test func graceKeepsRecentlyRetiredGenerations() async throws {
        let f = try await Fixture.registered()
        for version in 1...3 {
            try f.release(["a.txt": "v\(version)"])
        }
        // Default grace (10 min): generation 1 was handed out moments ago and must stay valid.
        #expect(GenerationStore(layout: f.settings.cache).all().map(\.number) == [3, 2, 1])
    }

    @Test func syncPlanIsPure() throws {
        func entry(_ uri: String, _ hash: String) throws -> RouteEntry {
            RouteEntry(uri: try URIPath(validating: uri), hash: ContentHash(hex: String(repeating: hash, count: 32))!, size: 10)
        }
        let table = try RouteTable(entries: [try entry("a", "1"), try entry("b", "2"), try entry("c", "2"), try entry("d", "3"), try entry("e", "4")])
        let preset = try RouteTable(entries: [try entry("a", "1"), try entry("old-d", "3")])
        let stored: Set<ContentHash> = [ContentHash(hex: String(repeating: "4", count: 32))!]
        let plan = SyncPlan(table: table, preset: preset, presetHas: { _ in true }, storeHas: { stored.contains($0) })
        #expect(plan.fromPreset.map(\.uri.value) == ["a"])
        #expect(plan.downloads.map(\.uri.value) == ["b"])
        #expect(plan.imports.map(\.source.value) == ["old-d"])
        #expect(plan.cached.map(\.uri.value) == ["b", "c", "d", "e"])
        #expect(plan.downloadBytes == 10)
    }

    /// Issue 28: the table's sizes are the origin's numbers; their sum saturates (and the
    /// free-space check then fails) instead of trapping.
    @Test func downloadBytesSaturateInsteadOfOverflowing() throws {
        let big = ByteCount.limit
        let entries = try (1...3).map { n in
            RouteEntry(uri: try URIPath(validating: "f\(n)"), hash: ContentHash(hex: String(repeating: "\(n)", count: 32))!, size: big)
        }
        let plan = SyncPlan(table: try RouteTable(entries: entries), preset: try RouteTable(entries: []), presetHas: { _ in false }, storeHas: { _ in false })
        #expect(plan.downloadBytes == .max)
        let huge = RouteEntry(uri: try URIPath(validating: "g"), hash: ContentHash(hex: String(repeating: "9", count: 32))!, size: .max)
        let alone = SyncPlan(table: try RouteTable(entries: [huge]), preset: try RouteTable(entries: []), presetHas: { _ in false }, storeHas: { _ in false })
        #expect(alone.downloadBytes == .max)
    }
}

@Suite(.awaitsCleanups) struct CompressedCopyCollectionTests {
    @Test func gzipCopiesOfContentNoGenerationListsAreRemoved() async throws {
        var f = try await Fixture.registered()
        f.settings.grace = 0
        f.settings.keepGenerations = 1
        try f.release(["a.css": "v1"])
        let folder = f.settings.cache.root + "/gzip"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let v1 = TestOrigin.md5(Array("v1".utf8))
        let v2 = TestOrigin.md5(Array("v2".utf8))
        _ = FileManager.default.createFile(atPath: folder + "/\(v1).gz", contents: Data("x".utf8))
        try f.release(["a.css": "v2"])
        _ = FileManager.default.createFile(atPath: folder + "/\(v2).gz", contents: Data("y".utf8))
        try f.release(["a.css": "v2", "b.css": "b"])
        #expect(!FileManager.default.fileExists(atPath: folder + "/\(v1).gz"))
        #expect(FileManager.default.fileExists(atPath: folder + "/\(v2).gz"))
    }
}

@Suite(.awaitsCleanups) struct HugeTableTests {
    /// A table past the 64 MiB cap is refused while it streams in: memory stays bounded.
    @Test func tablesOverTheCapAreRefused() async throws {
        let f = try await Fixture.registered()
        let entry = Array(#"{"uri":"a/very/long/path/to/some/file.js","hash":"0123456789abcdef0123456789abcdef"},"#.utf8)
        var table: [UInt8] = [UInt8(ascii: "[")]
        table.reserveCapacity((65 << 20) + entry.count)
        while table.count < 65 << 20 { table.append(contentsOf: entry) }
        f.origin.put("Routes.json", table)
        let error = expectError(.integrity) { _ = try f.sync() }
        #expect(error?.message.contains("limit") == true)
        #expect(GenerationStore(layout: f.settings.cache).current() == nil)
    }
}
