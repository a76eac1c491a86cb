import Foundation
import Testing
import TestOrigin

@Suite(.awaitsCleanups) struct CommandLineTests {
    @Test func publishSyncResolveAsAUserWould() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        // Publisher: build a table with `routes`, upload it with the files.
        try dir.write("site/index.html", "<h1>hello</h1>")
        try dir.write("site/js/app.js", "go()")
        let routes = try Binary.run(["routes", dir.path("site")])
        #expect(routes.status == 0, "\(routes.stderr)")
        for uri in ["index.html", "js/app.js", "Routes.json"] { origin.put(uri, dir.read("site/" + uri)!) }

        let common = ["--remote", origin.url] + Device(in: dir).flags
        let sync = try Binary.run(["sync", "--json"] + common)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["outcome"] as? String == "committed")
        #expect(try sync.json()["downloadedFiles"] as? Int == 2)

        let again = try Binary.run(["sync", "--json"] + common)
        #expect(try again.json()["outcome"] as? String == "not-modified")

        let resolve = try Binary.run(["resolve", "js/app.js", "--json"] + common)
        #expect(resolve.status == 0)
        let json = try resolve.json()
        #expect(json["source"] as? String == "cache")
        #expect(json["stale"] as? Bool == false)
        #expect(json["uri"] as? String == "js/app.js")
        let path = try #require(json["path"] as? String)
        #expect(path.hasPrefix("/") && path.hasSuffix("/js/app.js"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "go()")

        let plain = try Binary.run(["resolve", "js/app.js"] + common)
        #expect(plain.stdout == path + "\n")

        let verify = try Binary.run(["verify"] + common)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let status = try Binary.run(["status", "--json"] + common)
        #expect(try status.json()["generation"] as? Int == 1)
        #expect(try status.json()["entries"] as? Int == 2)
    }

    @Test func everyExitCodeComesFromARealSituation() async throws {
        let (origin, dir, common) = try await OriginAndDevice.make()
        origin.publish(["a.txt": "a"])
        #expect(try Binary.run(["sync"] + common).status == 0)

        // 2: not in the table.
        let missing = try Binary.run(["resolve", "nope.txt"] + common)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nope.txt"))
        #expect(missing.stdout.isEmpty)

        // 4: the remote publishes a hostile table.
        origin.put("Routes.json", #"[{"uri": "../escape", "hash": "0123456789abcdef0123456789abcdef"}]"#)
        let hostile = try Binary.run(["sync"] + common)
        #expect(hostile.status == 4)
        #expect(hostile.stderr.contains("../escape"))
        // ... and the previous table stays in force.
        #expect(try Binary.run(["resolve", "a.txt", "--offline"] + common).status == 0)

        // 3: the origin is down.
        await origin.shutdown()
        let down = try Binary.run(["sync"] + common.map { $0 == origin.url ? Binary.downRemote : $0 })
        #expect(down.status == 3)
        #expect(down.stderr.contains("127.0.0.1"))

        // 5: the cache cannot be created.
        try dir.write("not-a-dir", "x")
        let storage = try Device(cache: dir.path("not-a-dir"), preset: dir.path("preset")).run(["sync", "--remote", origin.url])
        #expect(storage.status == 5)
        #expect(storage.stderr.contains("not-a-dir"))

        // 64: usage.
        #expect(try Binary.run(["sync", "--connections", "0"] + common).status == 64)
        #expect(try Binary.run(["resolve"]).status == 64)
        #expect(try Device(cache: dir.path("c2")).run(["sync"]).status == 64)
        #expect(try Device(cache: dir.path("c2")).run(["sync", "--remote", "ftp://x"]).status == 64)
    }

    /// `sync` and `seed` start loading libcurl on a second thread at launch. One that fails
    /// before it downloads used to exit while that load ran, and about 2% of such runs died of
    /// SIGSEGV in libcurl's dependencies' exit handlers instead of exiting 5.
    /// A channel name that is not one is a usage error (64) naming the option, on every command that takes one.
    @Test(arguments: [["routes", "/tmp", "--channel", "Beta"], ["publish", "/tmp", "--to", "/tmp/x", "--channel", "Beta"],
                      ["promote", "--from", "beta", "--to", "../x", "/tmp/x"], ["halt", "--channel", "b/c", "/tmp/x"],
                      ["rollback", "--channel", "Beta", "/tmp/x"], ["sync", "--channel", "Beta", "--remote", "http://127.0.0.1:9"]])
    func aChannelThatIsNoNameIsAUsageError(_ arguments: [String]) throws {
        let run = try Binary.run(arguments)
        #expect(run.status == 64 && run.stderr.contains("must be lower-case letters, digits and -"), "\(arguments): \(run.status) \(run.stderr)")
    }

    @Test func aSyncThatFailsBeforeDownloadingExitsWithItsCodeEveryTime() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("not-a-dir", "x")
        var codes: [Int32: Int] = [:]
        for _ in 0..<150 {
            let run = try Device(cache: dir.path("not-a-dir"), preset: dir.path("preset")).run(["sync", "--remote", "http://127.0.0.1:9"])
            codes[run.status, default: 0] += 1
        }
        #expect(codes == [5: 150])
    }

    @Test func strictAndStaleLookups() async throws {
        let (origin, dir, common) = try await OriginAndDevice.make()
        try dir.write("preset/app.js", "old build")
        try dir.write("preset/Routes.json", #"[{"uri": "app.js", "hash": "\#(TestOrigin.md5(Array("old build".utf8)))"}]"#)
        // The cache's table says app.js changed, but the origin is gone before the file arrives.
        origin.publish(["app.js": "new build"])
        origin.inject(.status(404), on: "app.js")
        #expect(try Binary.run(["sync"] + common).status == 3)
        // Nothing was committed: the preset table is in force and answers as current.
        let current = try Binary.run(["resolve", "app.js", "--json"] + common)
        #expect(try current.json()["source"] as? String == "preset")
        #expect(try current.json()["stale"] as? Bool == false)

        // The new build arrives and is committed; then its copy is lost and the origin goes away.
        origin.clearFaults()
        #expect(try Binary.run(["sync"] + common).status == 0)
        let fresh = try Binary.run(["resolve", "app.js", "--json"] + common)
        #expect(try fresh.json()["source"] as? String == "cache" && fresh.json()["stale"] as? Bool == false)
        let lost = try #require(try fresh.json()["path"] as? String)
        #expect(dir.read(String(lost.dropFirst(dir.root.count + 1))) == "new build")
        try removeEveryCopy(of: "new build", in: dir.path("cache"))
        await origin.shutdown()
        // Another test's origin may take the stopped one's port: the refetch asks where nothing listens.
        let gone = common.map { $0 == origin.url ? Binary.downRemote : $0 }

        // Nothing current can be had: the newest verified copy, marked stale, with a warning ...
        let stale = try Binary.run(["resolve", "app.js", "--json"] + gone)
        #expect(stale.status == 0, "\(stale.stderr)")
        #expect(try stale.json()["stale"] as? Bool == true)
        #expect(try stale.json()["source"] as? String == "preset")
        let stalePath = try #require(try stale.json()["path"] as? String)
        #expect(dir.read(String(stalePath.dropFirst(dir.root.count + 1))) == "old build")
        #expect(stale.stderr.contains("stale"))
        // ... and with --strict, exit 3 and no path.
        let strict = try Binary.run(["resolve", "app.js", "--json", "--strict"] + gone)
        #expect(strict.status == 3, "\(strict.stderr)")
        #expect(strict.stdout.isEmpty)
    }

    /// Deletes every file under `root` whose content is `text` (a cache's object and its generation's link).
    private func removeEveryCopy(of text: String, in root: String) throws {
        let files = try #require(FileManager.default.enumerator(atPath: root))
        var removed = 0
        for case let relative as String in files {
            let path = root + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if (try? String(contentsOfFile: path, encoding: .utf8)) == text {
                try FileManager.default.removeItem(atPath: path)
                removed += 1
            }
        }
        #expect(removed >= 1)
    }

    @Test func seedFillsAndChecksAPresetFolder() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "i", "js/a.js": "shared", "js/b.js": "shared"])
        let seed = try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--json"])
        #expect(seed.status == 0, "\(seed.stderr)")
        #expect(try seed.json()["downloadedFiles"] as? Int == 2)
        #expect(dir.read("preset/js/b.js") == "shared")
        #expect(dir.read("preset/Routes.json") != nil)
        #expect(!FileManager.default.fileExists(atPath: dir.path("preset/.cenarius-seed")))

        #expect(try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--check"]).status == 0)
        // A symlink inside the folder is checked by what it points to (the batch hasher does not follow links).
        try FileManager.default.removeItem(atPath: dir.path("preset/js/b.js"))
        try FileManager.default.createSymbolicLink(atPath: dir.path("preset/js/b.js"), withDestinationPath: "a.js")
        #expect(try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--check"]).status == 0)
        try dir.write("preset/js/a.js", "tampered")
        let check = try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--check"])
        #expect(check.status == 4)
        #expect(check.stderr.contains("js/a.js") && check.stderr.contains("js/b.js"))

        // Re-seeding after a remote change downloads only what changed.
        origin.publish(["index.html": "i2", "js/a.js": "shared", "js/b.js": "shared"])
        origin.resetRequests()
        let reseed = try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--json"])
        #expect(reseed.status == 0)
        // The release index is asked for once (a 404 here: docs/release-bytes.md).
        #expect(Set(origin.requests.map(\.path).filter { !$0.hasPrefix("_cenarius/index/") }) == ["Routes.json", "index.html"])
    }

    /// Proxy variables reach libcurl as they always did: cenariusd only tells it to stop looking
    /// them up at every transfer when none is set. Nothing listens on port 1 of loopback.
    @Test func proxyVariablesAreHonoured() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "i"])
        let seed = ["seed", "--remote", origin.url, "--preset", dir.path("preset")]
        for variable in ["http_proxy", "all_proxy", "ALL_PROXY"] {
            let proxied = try Binary.run(seed, environment: [variable: "http://127.0.0.1:1"])
            #expect(proxied.status == 3, "\(variable): \(proxied.stderr)")
        }
        #expect(origin.requests.isEmpty)
        let bypassed = try Binary.run(seed, environment: ["http_proxy": "http://127.0.0.1:1", "no_proxy": "127.0.0.1"])
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        #expect(dir.read("preset/index.html") == "i")
    }

    /// New paths are downloaded straight into place; a seed that fails takes them away again,
    /// folders included, and never touches what was there.
    @Test func failedSeedLeavesThePresetAsItWas() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let seed = { try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--json"]) }
        origin.publish(["index.html": "i", "deep/er/a.js": "a", "deep/b.js": "b", "copy.js": "a"])
        origin.inject(.corrupt, on: "deep/b.js")
        try FileManager.default.createDirectory(atPath: dir.path("preset"), withIntermediateDirectories: true)
        let cold = try seed()
        #expect(cold.status == 4, "\(cold.stderr)")
        #expect(cold.stderr.contains("deep/b.js") && cold.stderr.contains("not changed"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("preset")) == [])

        origin.clearFaults()
        #expect(try seed().status == 0)
        let table = dir.read("preset/Routes.json")
        // Second release: a changed file, a new file in a new folder, and one that cannot be had.
        origin.publish(["index.html": "i2", "deep/er/a.js": "a", "deep/b.js": "b2", "new/c.js": "c", "copy.js": "a"])
        origin.inject(.status(404), on: "deep/b.js")
        #expect(try seed().status == 3)
        #expect(dir.read("preset/index.html") == "i" && dir.read("preset/deep/b.js") == "b")
        #expect(dir.read("preset/Routes.json") == table)
        #expect(!FileManager.default.fileExists(atPath: dir.path("preset/new")))

        origin.clearFaults()
        let update = try seed()
        #expect(update.status == 0, "\(update.stderr)")
        #expect(dir.read("preset/index.html") == "i2" && dir.read("preset/deep/b.js") == "b2" && dir.read("preset/new/c.js") == "c")
        #expect(dir.read("preset/copy.js") == "a" && dir.read("preset/deep/er/a.js") == "a")
        #expect(try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--check"]).status == 0)
    }

    /// A path that is a file in one release and a folder in the next (and back).
    @Test func seedTurnsAFileIntoAFolderAndBack() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let seed = { try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--json"]) }
        let check = { try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("preset"), "--check"]).status }
        origin.publish(["index.html": "i", "js": "a file"])
        #expect(try seed().status == 0)
        origin.publish(["index.html": "i", "js/app.js": "now a folder", "js/lib/x.js": "x"])
        let intoFolder = try seed()
        #expect(intoFolder.status == 0, "\(intoFolder.stderr)")
        #expect(try intoFolder.json()["removedFiles"] as? Int == 1)
        #expect(dir.read("preset/js/app.js") == "now a folder" && dir.read("preset/js/lib/x.js") == "x")
        #expect(try check() == 0)
        origin.publish(["index.html": "i", "js": "a file again"])
        let back = try seed()
        #expect(back.status == 0, "\(back.stderr)")
        #expect(dir.read("preset/js") == "a file again")
        #expect(try check() == 0)
    }

    @Test func routesCheckAndAlgorithms() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("site/a.css", "a{}")
        try dir.write("site/.DS_Store", "junk")
        #expect(try Binary.run(["routes", dir.path("site"), "--algorithm", "sha256"]).status == 0)
        let table = try #require(dir.read("site/Routes.json"))
        #expect(table.contains("a.css"))
        #expect(!table.contains("DS_Store"))
        #expect(table.contains(TestOrigin.sha256(Array("a{}".utf8))))
        #expect(try Binary.run(["routes", dir.path("site"), "--check", "--algorithm", "sha256"]).status == 0)
        try dir.write("site/b.css", "b{}")
        let stale = try Binary.run(["routes", dir.path("site"), "--check", "--algorithm", "sha256"])
        #expect(stale.status == 4)
        #expect(stale.stderr.contains("b.css"))
        #expect(try Binary.run(["routes", dir.path("site"), "--algorithm", "crc32"]).status == 64)
    }

    @Test func verifyDetectsACorruptedObject() async throws {
        let (origin, dir, common) = try await OriginAndDevice.make()
        origin.publish(["a.txt": "original"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        let hash = TestOrigin.md5(Array("original".utf8))
        try dir.write("cache/objects/\(hash.prefix(2))/\(hash)", "bitrot")
        let verify = try Binary.run(["verify"] + common)
        #expect(verify.status == 4)
        #expect(verify.stderr.contains(hash))
    }

    @Test func developModeNeedsNoRemote() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("home/Documents/www/index.html", "dev")
        let run = try Device(cache: dir.path("cache")).run(["resolve", "index.html", "--develop", "--json"], environment: ["HOME": dir.path("home")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try run.json()["source"] as? String == "develop")
        #expect(try Binary.run(["resolve", "none.html", "--develop"], environment: ["HOME": dir.path("home")]).status == 2)
    }

    @Test func settingsPrecedenceFlagThenEnvironmentThenConfigFile() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["a.txt": "a"])
        try dir.write("config.json", #"{"remote": "http://127.0.0.1:1", "cache": "\#(dir.path("cache"))", "preset": "\#(dir.path("preset"))"}"#)
        // Config file alone: its remote is unreachable.
        #expect(try Binary.run(["sync", "--config", dir.path("config.json")]).status == 3)
        // Environment beats the file.
        #expect(try Binary.run(["sync", "--config", dir.path("config.json")], environment: ["CENARIUS_REMOTE": origin.url]).status == 0)
        // The flag beats the environment.
        let flag = try Binary.run(["sync", "--config", dir.path("config.json"), "--remote", origin.url], environment: ["CENARIUS_REMOTE": "http://127.0.0.1:1"])
        #expect(flag.status == 0)
        // A broken config file is a usage error.
        try dir.write("bad.json", "{not json")
        #expect(try Binary.run(["sync", "--config", dir.path("bad.json")]).status == 64)
    }

    @Test func helpShowsAnExampleForEveryCommand() throws {
        // Every subcommand the top-level help lists, so that a new command cannot be left out.
        let top = try Binary.run(["--help"])
        let listed = top.stdout.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        // A command's line is indented by two spaces; its wrapped description, by more.
        let commands = listed.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), !line.hasPrefix("  See ") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }
        #expect(Set(["resolve", "sync", "serve", "seed", "routes", "verify", "status", "origin", "confirm", "rollback", "keygen"]).isSubset(of: Set(commands)), "\(commands)")
        for command in commands {
            let help = try Binary.run([command, "--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("Example"), "\(command) --help has no example")
        }
    }
}

@Suite(.awaitsCleanups) struct FastResolvePathTests {
    /// `resolve` has a hand-parsed fast path; anything it does not handle goes through the
    /// regular command line (a numeric option forces that). Both must print the same bytes.
    @Test func fastAndRegularPathsAgree() async throws {
        let (origin, dir, common) = try await OriginAndDevice.make()
        origin.publish(["a b/ü.txt": "x", "index.html": "i"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        // A config file is read on the regular path only: an empty one changes nothing else.
        try dir.write("empty.json", "{}")
        let regularPath = ["--config", dir.path("empty.json")]
        for arguments in [["resolve", "index.html"], ["resolve", "a%20b/%C3%BC.txt?x=1", "--json"], ["resolve", "--json", "index.html", "--offline"]] {
            let fast = try Binary.run(arguments + common)
            let regular = try Binary.run(arguments + common + regularPath)
            #expect(fast.status == 0, "\(fast.stderr)")
            #expect(fast.stdout == regular.stdout)
        }
        let env = try Binary.run(["resolve", "index.html", "--json"], environment: ["CENARIUS_REMOTE": origin.url, "CENARIUS_CACHE": dir.path("cache"), "CENARIUS_PRESET": dir.path("preset")])
        #expect(try env.json()["source"] as? String == "cache")
        for broken in [["resolve"], ["resolve", "a", "b"], ["resolve", "--cache"], ["resolve", "index.html", "--bogus"]] {
            #expect(try Binary.run(broken).status == 64, "\(broken)")
        }
        #expect(try Binary.run(["resolve", "nope"] + common).status == 2)
        #expect(try Binary.run(["resolve", "--help"]).stdout.contains("Example"))
        // sync takes the same two paths.
        let fastSync = try Binary.run(["sync", "--json"] + common)
        let regularSync = try Binary.run(["sync", "--json"] + regularPath + common)
        #expect(try fastSync.json()["outcome"] as? String == "not-modified")
        #expect(try regularSync.json()["outcome"] as? String == "not-modified")
        #expect(try Binary.run(["sync", "extra"] + common).status == 64)
        // So does seed, with --connections and --check on the fast one.
        let seed = ["seed", "--remote", origin.url, "--preset", dir.path("seeded"), "--connections", "4"]
        let fastSeed = try Binary.run(seed + ["--json"])
        #expect(fastSeed.status == 0, "\(fastSeed.stderr)")
        #expect(try fastSeed.json()["downloadedFiles"] as? Int == 2)
        let fastCheck = try Binary.run(seed + ["--check"])
        let regularCheck = try Binary.run(seed + ["--check"] + regularPath)
        #expect(fastCheck.status == 0 && fastCheck.stdout == regularCheck.stdout, "\(fastCheck.stderr)")
        #expect(try Binary.run(["seed", "--connections", "0", "--remote", origin.url, "--preset", dir.path("seeded")]).status == 64)
        #expect(try Binary.run(["seed", "--preset", dir.path("seeded")]).status == 64)
    }
}
