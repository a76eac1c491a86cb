import Foundation
import Testing
import TestOrigin

/// `publish` carries the last solid pack forward (docs/publish.md, "What a publish costs"): a
/// one-file release uploads no new pack, devices at every point of the chain — on the pack's own
/// release, on a middle one, installing first — install it, and `--repack` (or the threshold)
/// starts a new chain. To a folder nginx serves and to the three-replica store.
@Suite(.serialized, .awaitsCleanups) struct CarriedPackTests {
    @Test func aChainOfReleasesThenARepackToAFolder() throws {
        let origin = try TLSOrigin()
        let publisher = try PublishTests.Publisher(remote: origin.folder("site"), publicURL: origin.url(.good), deviceFlags: ["--cacert", origin.caFile])
        try Self.chain(publisher, head: { try Self.head(origin.folder("site")) })
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aChainOfReleasesThenARepackToTheObjectStore() async throws {
        let (store, bucket, publisher) = try await PublishTests.Publisher.onObjectStore("carry", remoteFlags: ["--jobs", "4"])
        try Self.chain(publisher, head: {
            let run = try Binary.run(["-s", publisher.publicURL + "/Routes.head"], executable: "/usr/bin/curl")
            return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        }, writes: { try PublishTests.writes(store, bucket: bucket) })
    }

    /// A one-file release right after one that changed every file (a bundler's: new content-hashed
    /// names, the old ones still at their uris): on the store, whose listing's ETags show it still holds
    /// the bases, the patches from the release before are the store's, taken by their names, and no
    /// base file is read for them; a device still on that release decodes them (no fallback), as do
    /// devices on the last release and new ones.
    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aOneFileReleaseAfterABigOneReadsNoBaseForHeldPatches() async throws {
        let (store, bucket, publisher) = try await PublishTests.Publisher.onObjectStore("byname")
        let kinds = ["z", "p", "pack"]
        var before: [Int] = []
        let (big, one) = try Self.oneFileAfterABigOne(publisher) { before = kinds.map { Self.reads(store, bucket: bucket, under: "_cenarius/\($0)/") } }
        #expect((one["baseBytesRead"] as? Int ?? .max) < 1_000, "only the page's base (from release 2) is read: \(one), \(big)")
        let read = zip(kinds, before).map { Self.reads(store, bucket: bucket, under: "_cenarius/\($0)/") - $1 }
        // The 120 modules' forms (release 2's) are listed under their hashes, and each one's frame in
        // the delta pack from release 1 is its patch: no form is read (docs/decisions.md). Those
        // patches are the frames of release 2's delta pack from release 1: that pack is read, not them.
        #expect(read == [0, 0, 1], "forms, patches and packs read: \(read); \(one)")
    }

    /// How many GETs `publish` sent for keys under `prefix` of the bucket's `app/`, from the store's log.
    static func reads(_ store: ObjectStore, bucket: String, under prefix: String) -> Int {
        let log = (try? String(contentsOfFile: store.accessLog, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains(" cenariusd-publish ") && $0.contains(" GET /\(bucket)/app/\(prefix)") }.count
    }

    /// The same to a folder, whose listing tells no file's hash: the bases are read and checked, as before.
    @Test func aOneFileReleaseAfterABigOneToAFolderReadsItsBases() throws {
        let origin = try TLSOrigin()
        let publisher = try PublishTests.Publisher(remote: origin.folder("site"), publicURL: origin.url(.good), deviceFlags: ["--cacert", origin.caFile])
        let (_, one) = try Self.oneFileAfterABigOne(publisher)
        #expect((one["baseBytesRead"] as? Int ?? 0) > 120 * 4_000, "\(one)")
    }

    /// Releases 1 to 3: 120 modules under content-hashed names, all of them changed in 2, the page alone in 3.
    /// `beforeTheOneFile`: called between release 2's installs and release 3's publish.
    static func oneFileAfterABigOne(_ publisher: PublishTests.Publisher,
                                    beforeTheOneFile: () throws -> Void = {}) throws -> (big: [String: Any], one: [String: Any]) {
        func publish(_ n: Int, modules version: Int) throws -> [String: Any] {
            let folder = "bundled-\(n)"
            for m in 0..<120 {
                let name = "js/module-\(m).\(String(0x1000_0000 + version << 16 + m, radix: 16)).js"
                try publisher.dir.write("\(folder)/\(name)", ReleaseBytesEndToEndTests.bundle(UInt64(m + 1), 4_000) + "\n// version \(version)\n")
            }
            try publisher.dir.write("\(folder)/index.html", "<h1>release \(n)</h1>")
            let run = try publisher.run(["publish", publisher.dir.path(folder), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key"),
                                         "--json"] + publisher.remoteFlags)
            #expect(run.status == 0, "publish \(n): \(run.stderr)")
            return try run.json()
        }
        _ = try publish(1, modules: 1)
        _ = try installs(publisher, "on-1", 1)
        let big = try publish(2, modules: 2)
        #expect((big["baseBytesRead"] as? Int ?? 0) > 120 * 4_000, "release 2 patches every module from release 1's: \(big)")
        _ = try installs(publisher, "on-2", 2)
        try beforeTheOneFile()
        let one = try publish(3, modules: 2)
        #expect(one["pack"] as? String == "carried", "\(one)")
        for device in ["on-1", "on-2"] {
            let synced = try installs(publisher, device, 3)
            #expect((synced["bytesFetched"] as? Int ?? .max) < (big["uploadedBytes"] as? Int ?? 0) / 4, "\(device): \(synced)")
        }
        _ = try installs(publisher, "fresh-3", 3)
        return (big, one)
    }

    /// Release `n` of a site of 120 text files (about 0.5 MB) where only the page changes.
    static func build(_ publisher: PublishTests.Publisher, _ n: Int) throws -> String {
        let folder = "carried-\(n)"
        for m in 0..<120 where !FileManager.default.fileExists(atPath: publisher.dir.path("\(folder)/js/module-\(m).js")) {
            try publisher.dir.write("\(folder)/js/module-\(m).js", ReleaseBytesEndToEndTests.bundle(UInt64(m + 1), 4_000))
        }
        try publisher.dir.write("\(folder)/index.html", "<h1>release \(n)</h1>")
        return publisher.dir.path(folder)
    }

    static func publish(_ publisher: PublishTests.Publisher, _ n: Int, _ extra: [String] = []) throws -> [String: Any] {
        let run = try publisher.run(["publish", try build(publisher, n), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key"),
                                     "--release", "r\(n)", "--json"] + publisher.remoteFlags + extra)
        #expect(run.status == 0, "publish \(n): \(run.stderr)")
        return try run.json()
    }

    /// How many file forms and plain copies a folder remote's store holds (nil for a store: not listed here).
    static func storeFiles(_ publisher: PublishTests.Publisher) -> Int? {
        guard !publisher.remote.contains("://") else { return nil }
        return ["z", "f"].reduce(0) { $0 + ((try? FileManager.default.contentsOfDirectory(atPath: publisher.remote + "/_cenarius/" + $1))?.count ?? 0) }
    }

    /// `rollback --to` the version that published release `n`; every device goes to it.
    static func rollback(_ publisher: PublishTests.Publisher, to n: Int, devices: [String]) throws {
        let record = try #require(try publisher.releases().last { $0["release"] as? String == "r\(n)" }, "release \(n) is listed")
        let version = try #require(record["version"] as? Int, "\(record)")
        let run = try publisher.run(["rollback", "--channel", "default", "--to", String(version), publisher.remote, "--sign-key", publisher.dir.path("k1.key"),
                                     "--json"] + publisher.remoteFlags)
        #expect(run.status == 0, "rollback to release \(n): \(run.stderr)")
        for device in devices { _ = try installs(publisher, device, n) }
    }

    static func head(_ folder: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/Routes.head"))) as? [String: Any])
    }

    static func solidPackSize(_ head: [String: Any]) -> Int? { (head["solidPack"] as? [String: Any])?["size"] as? Int }

    /// A device syncs to release `n`, serves it, and every file it holds hashes right.
    static func installs(_ publisher: PublishTests.Publisher, _ device: String, _ n: Int) throws -> [String: Any] {
        let synced = try publisher.sync("\(device) to release \(n)", device: device)
        #expect(synced["outcome"] as? String == "committed" && synced["formFallbacks"] as? Int == 0, "\(device), release \(n): \(synced)")
        #expect(try publisher.served(device) == "<h1>release \(n)</h1>", "\(device), release \(n)")
        let verify = try Device(device, in: publisher.dir).run(["verify"])
        #expect(verify.status == 0, "\(device), release \(n): \(verify.stdout) \(verify.stderr)")
        return synced
    }

    static func chain(_ publisher: PublishTests.Publisher, head: () throws -> [String: Any], writes: (() throws -> Int)? = nil) throws {
        #expect(try publish(publisher, 1)["pack"] as? String == "made")
        let pack = try #require(solidPackSize(try head()), "release 1 names its solid pack")
        // The default channel's files are at their uris and in the solid pack: none has a store object of its own.
        #expect((storeFiles(publisher) ?? 0) == 0, "a first publish uploads each file once")
        _ = try installs(publisher, "on-pack", 1)

        // A one-file release: the head, table, index, page and delta packs; no new whole-site pack.
        let before = try writes?()
        let second = try publish(publisher, 2)
        #expect(second["pack"] as? String == "carried", "\(second)")
        let uploaded = try #require(second["uploadedBytes"] as? Int)
        #expect(uploaded < pack / 4, "release 2 uploaded \(uploaded) bytes, the pack is \(pack): \(second)")
        if let before, let writes { #expect(try writes() - before <= (second["uploaded"] as? Int ?? 0) + 10, "\(second)") }
        #expect(solidPackSize(try head()) == nil, "a carried release names no solid pack of its own")
        let middle = try installs(publisher, "middle", 2)
        // A first install: the carried pack and the delta pack from its table, about the pack's size.
        #expect((middle["bytesFetched"] as? Int ?? .max) <= pack + pack / 20, "\(middle)")

        #expect(try publish(publisher, 3)["pack"] as? String == "carried")
        let unchanged = try publish(publisher, 3)
        #expect(unchanged["unchanged"] as? Bool == true && unchanged["uploaded"] as? Int == 0, "\(unchanged)")
        // Every point of the chain: the pack's own release, a middle one, nothing at all.
        for device in ["on-pack", "middle"] {
            let synced = try installs(publisher, device, 3)
            #expect((synced["bytesFetched"] as? Int ?? .max) < pack / 10, "\(device) fetches the delta, not the pack: \(synced)")
        }
        let fresh = try installs(publisher, "fresh-3", 3)
        #expect((fresh["bytesFetched"] as? Int ?? .max) <= pack + pack / 20, "\(fresh)")

        // Asked for: a new pack, which the next release carries in turn.
        let repacked = try publish(publisher, 4, ["--repack"])
        #expect(repacked["pack"] as? String == "made", "\(repacked)")
        let newPack = try #require(solidPackSize(try head()), "a repack names its solid pack")
        let fresh4 = try installs(publisher, "fresh-4", 4)
        #expect((fresh4["bytesFetched"] as? Int ?? .max) <= newPack + 64, "right after a repack a first install is the pack: \(fresh4)")
        #expect(try publish(publisher, 5)["pack"] as? String == "carried")
        for device in ["on-pack", "fresh-3", "fresh-4", "fresh-5"] { _ = try installs(publisher, device, 5) }
        // Rebuilt from the store alone, where files are in a pack and at uris a later release overwrote:
        // back to release 3 (its files in the carried pack of release 1), then to 4 (in its own pack).
        try rollback(publisher, to: 3, devices: ["on-pack", "fresh-4"])
        try rollback(publisher, to: 4, devices: ["on-pack", "middle"])
        try rollback(publisher, to: 5, devices: ["on-pack", "middle"])
        guard !publisher.remote.contains("://") else { return }

        // An offline first install of a carried release: the carried pack, its table and the delta pack, not every form.
        let tar = publisher.dir.path("first.cenarius.tar")
        let bundled = try publisher.run(["bundle", publisher.remote, "--output", tar, "--json"])
        #expect(bundled.status == 0, "\(bundled.stderr)")
        let names = try Binary.run(["-tf", tar], executable: "/usr/bin/tar").stdout.split(separator: "\n")
        #expect(!names.contains { $0.hasPrefix("_cenarius/z/") } && names.filter { $0.hasPrefix("_cenarius/pack/") }.count == 2, "\(names)")
        #expect((try FileManager.default.attributesOfItem(atPath: tar)[.size] as? Int ?? .max) <= newPack + newPack / 20 + 64 << 10)
        let imported = try Device("offline", in: publisher.dir).run(["import", tar, "--json", "--public-key", publisher.dir.path("k1.pub")])
        #expect(imported.status == 0 && (try? imported.json()["outcome"] as? String) == "committed", "\(imported.stdout) \(imported.stderr)")
        #expect(try publisher.served("offline") == "<h1>release 5</h1>")
    }
}
