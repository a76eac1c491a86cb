import Foundation
import Testing
import TestOrigin

/// G5, hostile neighbours: a symlink, FIFO or foreign file planted anywhere in the cache layout is
/// an entry to remove, never a way out. Each plant points at a "victim" folder outside the cache,
/// and after every sync (an unchanged 304 poll, then a release) the victim holds exactly what it did.
@Suite(.awaitsCleanups) struct HostileCacheTests {
    /// Every file under `root` with its bytes, links and FIFOs by kind: what "untouched" means.
    static func snapshot(_ root: String) -> [String: String] {
        var out: [String: String] = [:]
        for relative in (FileManager.default.subpaths(atPath: root) ?? []).sorted() {
            let path = root + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG: out[relative] = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<binary>"
            case S_IFDIR: out[relative] = "<dir>"
            default: out[relative] = "<mode \(info.st_mode & S_IFMT)>"
            }
        }
        return out
    }

    static func makeVictim(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/sub", withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path + "/keep.txt"))
        try Data("deep".utf8).write(to: URL(fileURLWithPath: path + "/sub/deep.txt"))
        try Data("not ours".utf8).write(to: URL(fileURLWithPath: path + "/old.gz"))
    }

    static func replace(_ path: String, withLinkTo target: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    @Test func linksPlantedAtEveryLevelAreRemovedNeverFollowed() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let cache = dir.path("cache")
        let victim = dir.path("victim")
        try Self.makeVictim(victim)
        let before = Self.snapshot(victim)
        let common = ["--remote", origin.url] + Device(cache: cache, preset: dir.path("preset")).flags + ["--keep", "1", "--grace", "0"]
        var release = 1
        func publish() {
            origin.publish(["index.html": "v\(release)", "js/app.js": "app \(release)", "css/a.css": "same"])
        }
        publish()
        let first = try Binary.run(["sync"] + common)
        try #require(first.status == 0, "\(first.stderr)")

        let appHash = TestOrigin.md5(Array("app 2".utf8))
        let sameHash = TestOrigin.md5(Array("same".utf8))
        // Each level of the layout, linked to the victim folder (or a file in it).
        let plants: [(String, String)] = [
            ("tmp", victim), ("objects", victim), ("objects/" + appHash.prefix(2), victim),
            ("objects/" + sameHash.prefix(2) + "/" + sameHash, victim + "/keep.txt"),
            ("generations", victim), ("generations/99.building", victim), ("gzip", victim),
            ("tmp/" + appHash + ".part", victim + "/keep.txt"), ("current.next", victim),
            ("lock", victim + "/keep.txt"), ("checked", victim + "/keep.txt"),
        ]
        for (entry, target) in plants {
            try Self.replace(cache + "/" + entry, withLinkTo: target)
            let poll = try Binary.run(["sync", "--json"] + common)
            #expect(poll.status == 0, "\(entry): \(poll.stderr)")
            #expect(Self.snapshot(victim) == before, "an unchanged poll with \(entry) planted touched the victim")

            try Self.replace(cache + "/" + entry, withLinkTo: target)
            release += 1
            publish()
            let sync = try Binary.run(["sync", "--json"] + common)
            #expect(sync.status == 0, "\(entry): \(sync.stderr)")
            #expect(try sync.json()["outcome"] as? String == "committed", "\(entry)")
            #expect(Self.snapshot(victim) == before, "a release with \(entry) planted touched the victim")
            let resolved = try Binary.run(["resolve", "js/app.js", "--offline"] + common)
            #expect(resolved.status == 0, "\(entry): \(resolved.stderr)")
            let path = resolved.stdout.trimmingCharacters(in: .newlines)
            #expect(path.hasPrefix(cache + "/"), "\(entry): \(path)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "app \(release)", "\(entry)")
        }
        let verify = try Binary.run(["verify"] + common)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(Self.snapshot(victim) == before)
    }

    /// An origin publishing index.html and app.js ("one"), and a cache synced from it once.
    static func syncedOnce() async throws -> (TestOrigin, Scratch, cache: String, common: [String]) {
        let (origin, dir, common) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1", "app.js": "one"])
        let first = try Binary.run(["sync"] + common)
        try #require(first.status == 0, "\(first.stderr)")
        return (origin, dir, dir.path("cache"), common)
    }

    @Test func fifosPlantedInTheCacheAreRemovedNotOpened() async throws {
        let (origin, _, cache, common) = try await Self.syncedOnce()
        let hash = TestOrigin.md5(Array("two".utf8))
        for entry in ["tmp/stale.part", "objects/\(hash.prefix(2))/\(hash)", "lock", "generations/7"] {
            let path = cache + "/" + entry
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(mkfifo(path, 0o644) == 0, "\(entry)")
        }
        origin.publish(["index.html": "v2", "app.js": "two"])
        let sync = try Binary.run(["sync"] + common, killAfter: 60)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try Binary.run(["verify"] + common, killAfter: 60).status == 0)
        let resolved = try Binary.run(["resolve", "app.js", "--offline"] + common)
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8) == "two")
    }

    @Test func aLookupNeverTakesAFileOutsideTheCacheForAnObject() async throws {
        let (_, dir, cache, common) = try await Self.syncedOnce()
        let hash = TestOrigin.md5(Array("one".utf8))
        // A victim file named like the object, behind a link where the object's shard belongs; the
        // generation lacks the file, so a lookup links it in from the store on the spot.
        try dir.write("victim/" + hash, "not verified")
        try Self.replace(cache + "/objects/" + hash.prefix(2), withLinkTo: dir.path("victim"))
        try FileManager.default.removeItem(atPath: cache + "/generations/1/files/app.js")
        let resolved = try Binary.run(["resolve", "app.js", "--offline"] + common)
        let path = resolved.stdout.trimmingCharacters(in: .newlines)
        #expect(path.isEmpty || (try? String(contentsOfFile: path, encoding: .utf8)) != "not verified", "handed out \(path)")
        #expect(try Binary.run(["verify"] + common).stdout.contains("not verified") == false)
        #expect(dir.read("victim/" + hash) == "not verified")
    }

    @Test func aReleaseWaitingForItsMomentIsNeverWrittenThroughALink() async throws {
        let (origin, dir, cache, common) = try await Self.syncedOnce()
        try Self.makeVictim(dir.path("victim"))
        let before = Self.snapshot(dir.path("victim"))
        try Self.replace(cache + "/pending", withLinkTo: dir.path("victim"))
        origin.publish(["index.html": "v2", "app.js": "two"])
        let start = Int(Date().timeIntervalSince1970) + 100_000
        origin.put("Routes.json.release", #"{"release": "r2", "rollout": {"start": \#(start), "duration": 1000}}"#)
        let sync = try Binary.run(["sync", "--json"] + common)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["outcome"] as? String == "deferred")
        #expect(Self.snapshot(dir.path("victim")) == before, "the pending release was written into the victim")
    }

    @Test func aCacheOthersCanWriteOrAnotherUserOwnsIsRefused() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let cache = dir.path("cache")
        let common = ["--remote", origin.url] + Device(cache: cache, preset: dir.path("preset")).flags
        origin.publish(["index.html": "v1"])
        try #require(try Binary.run(["sync"] + common).status == 0)
        var info = stat()
        #expect(stat(cache, &info) == 0 && info.st_mode & 0o022 == 0, "made without group or other write")

        chmod(cache, 0o777)
        let open = try Binary.run(["sync"] + common)
        #expect(open.status == 5)
        #expect(open.stderr.contains("writable by other users") && open.stderr.contains("chmod go-w"), "\(open.stderr)")
        chmod(cache, 0o755)
        #expect(try Binary.run(["sync"] + common).status == 0)

        guard getuid() == 0 else {
            print("HostileCacheTests: not root, a cache owned by another user cannot be made here")
            return
        }
        chown(cache, 65534, 65534)
        let foreign = try Binary.run(["sync"] + common)
        #expect(foreign.status == 5)
        #expect(foreign.stderr.contains("belongs to user 65534"), "\(foreign.stderr)")
    }
}
