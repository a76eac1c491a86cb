import Foundation
import Testing
import TestOrigin

/// Head and store (docs/remote-layout.md) through the built binary: `routes` writes the head last
/// and only adds to the store; a device that sees a release index naming the head polls the head
/// alone from then on, and a release reaches it in three requests; every way a head can fail ends
/// in the release the table path gives, with the head forgotten where it is gone or broken.
@Suite(.awaitsCleanups) struct HeadAndStoreTests {
    static let legacyForm = "_cenarius/Routes.json.zst"

    /// A publisher with keys and release folders, and one device.
    struct Site {
        let dir: Scratch
        let origin: TestOrigin
        /// The channel published and followed; nil: the default one, through the Cenarius layout.
        var channel: String?

        init() async throws {
            dir = try Scratch()
            origin = try await TestOrigin()
            Cleanups.add { [origin, dir] in await origin.shutdown(); dir.remove() }
            for key in ["k1", "k2"] { try dir.keygen(key) }
        }

        /// Release `n` in its own folder, published with patches from the one before, and uploaded
        /// over the origin (nothing deleted, as an upload does).
        @discardableResult
        func publish(_ n: Int, key: String = "k1", upload: Bool = true, delta: Bool = true, extra: [String: Data] = [:],
                     options: [String] = []) throws -> String {
            let folder = dir.path("v\(n)")
            try? FileManager.default.removeItem(atPath: folder)
            for (path, bytes) in extra {
                try FileManager.default.createDirectory(atPath: (folder + "/" + path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try bytes.write(to: URL(fileURLWithPath: folder + "/" + path))
            }
            let bundle = ReleaseBytesEndToEndTests.bundle(3, 40_000) + "\n// release \(n)\n"
            try dir.write("v\(n)/js/app.\(String(repeating: String(n), count: 8)).js", bundle)
            try dir.write("v\(n)/index.html", "<h1>release \(n)</h1>")
            for m in 0..<30 { try dir.write("v\(n)/static/file-\(m).txt", "unchanged \(m)\n") }
            let forms = n == 1 || !delta ? ["--compress"] : ["--delta-from", dir.path("v\(n - 1)")]
            let routes = try Binary.run(["routes", folder, "--sign-key", dir.path(key + ".key")] + forms + following + options)
            #expect(routes.status == 0, "release \(n): \(routes.stderr)")
            #expect(try Binary.run(["routes", folder, "--check"]).status == 0, "release \(n): routes --check")
            if upload { try ReleaseBytesEndToEndTests.upload(folder, to: origin) }
            return folder
        }

        /// The device's cache and preset, for any of its commands.
        var places: [String] { Device("device", in: dir).flags }

        var device: [String] {
            ["sync", "--json", "--remote", origin.url] + places + ["--public-key", dir.path("k1.pub")] + following
        }

        /// `cenariusd COMMAND` on the device.
        func run(_ command: String, _ arguments: [String] = []) throws -> Binary.Run {
            try Binary.run([command] + arguments + places)
        }

        /// Releases 1 and 2 synced, then 2 rolled back: the head still offers the release held back.
        func rolledBackFromRelease2() throws {
            try publish(1)
            _ = try sync("committed", "release 1")
            try publish(2)
            _ = try sync("committed", "release 2 through the head")
            let rollback = try run("rollback")
            #expect(rollback.status == 0, "\(rollback.stderr)")
            _ = try sync("held-back", "the head still offers release 2")
        }

        /// `--channel C` when the site is a channel's.
        var following: [String] { channel.map { ["--channel", $0] } ?? [] }

        func sync(_ expected: String, _ what: String) throws -> Binary.Run {
            let run = try Binary.run(device)
            #expect(run.status == 0, "\(what): \(run.stderr)")
            #expect(try run.json()["outcome"] as? String == expected, "\(what): \(run.stdout)")
            return run
        }

        func served() throws -> String {
            try Device("device", in: dir).served()
        }

        var pollsTheHead: Bool { FileManager.default.fileExists(atPath: dir.path("device/cache/head.json")) && !(dir.read("device/cache/head.json") ?? "").contains("\"absent\" : true") }
    }

    @Test func aDeviceMovesToTheHeadAndEachReleaseTakesThreeRequests() async throws {
        let site = try await Site()
        try site.publish(1)
        _ = try site.sync("committed", "first install")
        #expect(site.pollsTheHead, "the release index named the head")
        // A first install asks for the head first: the next poll is a conditional one of the head.
        _ = try site.sync("not-modified", "the first poll of the head")
        site.origin.resetRequests()
        _ = try site.sync("not-modified", "an unchanged poll")
        #expect(site.origin.requests.map(\.path) == ["Routes.head"])
        #expect(site.origin.requests.first?.headers["if-none-match"] != nil)
        // A head gains nothing from compression and every byte of a poll counts (B7).
        #expect(site.origin.requests.first?.headers["accept-encoding"] == nil)

        for n in 2...3 {
            try site.publish(n)
            site.origin.resetRequests()
            _ = try site.sync("committed", "release \(n)")
            let paths = site.origin.requests.map(\.path)
            #expect(paths.first == "Routes.head", "release \(n): \(paths)")
            #expect(paths.dropFirst().allSatisfy { $0.hasPrefix("_cenarius/") && $0 != Self.legacyForm }, "release \(n): only store objects after the head: \(paths)")
            // The table and index arrive in the head, as a patch from the table in force: a release is
            // the head and the delta pack, and nothing of `_cenarius/t/`.
            #expect(paths.count <= 2, "release \(n) in two requests: the head, the delta pack: \(paths)")
            #expect(!paths.contains { $0.hasPrefix("_cenarius/t/") }, "release \(n): \(paths)")
            #expect(try site.served().hasPrefix("<h1>release \(n)</h1>"))
        }
        #expect(try site.run("verify").status == 0)
    }

    /// Files zstd cannot shrink come from the store (`_cenarius/f/<hash>`, an immutable name), and
    /// from their uri only when the store has lost them.
    @Test func incompressibleFilesComeFromTheStore() async throws {
        let site = try await Site()
        try site.publish(1)
        _ = try site.sync("committed", "release 1")
        let noise = (0..<2).map { _ in Data((0..<20_000).map { _ in UInt8.random(in: 0...255) }) }
        let folder = try site.publish(2, delta: false, extra: ["img/a.bin": noise[0], "img/b.bin": noise[1]])
        let md5 = noise.map { TestOrigin.md5(Array($0)) }
        #expect(FileManager.default.contents(atPath: folder + "/_cenarius/f/" + md5[0]) == noise[0], "routes wrote the store's copy")
        site.origin.remove("_cenarius/f/" + md5[1])
        // Most of the site is new, so the device would take the pack: gone, each file is fetched alone.
        for pack in try FileManager.default.contentsOfDirectory(atPath: folder + "/_cenarius/pack") { site.origin.remove("_cenarius/pack/" + pack) }
        site.origin.resetRequests()
        _ = try site.sync("committed", "release 2")
        let paths = site.origin.requests.map(\.path)
        #expect(paths.contains("_cenarius/f/" + md5[0]) && !paths.contains("img/a.bin"), "\(paths)")
        #expect(paths.contains("_cenarius/f/" + md5[1]) && paths.contains("img/b.bin"), "the store lost b: its uri, after: \(paths)")
        #expect(try site.run("verify").status == 0)
    }

    /// A device that rolled a release back polls the head that still offers it with one
    /// conditional request, and fetches nothing for the release it will not apply again.
    @Test func aRolledBackReleaseCostsOneRequestPerPoll() async throws {
        let site = try await Site()
        try site.rolledBackFromRelease2()
        site.origin.resetRequests()
        _ = try site.sync("held-back", "the next poll")
        #expect(site.origin.requests.map(\.path) == ["Routes.head"], "\(site.origin.requests.map(\.path))")
        #expect(try site.served().hasPrefix("<h1>release 1</h1>"))
    }

    enum HeadFault: String, CaseIterable, Sendable {
        case gone, garbage, unknownKey, objectsMissing, objectCorrupt, older
        /// The table patch from the device's table does not decode to what the head names: the
        /// device takes the compressed table instead, still through the head.
        case patchCorrupt
    }

    /// Whatever is wrong with the head or what it names, the device ends on the release the table
    /// gives, as if it had never known the head; a head that is gone or unreadable is forgotten.
    @Test(arguments: HeadFault.allCases)
    func everyHeadFailureEndsInTheTablesRelease(_ fault: HeadFault) async throws {
        let site = try await Site()
        try site.publish(1)
        _ = try site.sync("committed", "release 1")
        let olderHead = try #require(site.origin.file("Routes.head"))
        try site.publish(2)
        _ = try site.sync("committed", "release 2 through the head")
        let release3 = try site.publish(3)
        let head = try #require(site.origin.file("Routes.head"))
        let text = String(decoding: head, as: UTF8.self)
        switch fault {
        case .gone: site.origin.remove("Routes.head")
        case .garbage: site.origin.put("Routes.head", "{\"format\": \"cenarius-head-1\", \"channel\": 7}")
        case .unknownKey:
            // The same release's head as another key signs it: the device trusts only k1.
            let other = site.dir.path("v3-other")
            try FileManager.default.copyItem(atPath: release3, toPath: other)
            #expect(try Binary.run(["routes", other, "--compress", "--sign-key", site.dir.path("k2.key")]).status == 0)
            site.origin.put("Routes.head", try #require(try? Array(Data(contentsOf: URL(fileURLWithPath: other + "/Routes.head")))))
        case .objectsMissing, .objectCorrupt:
            for range in text.ranges(of: "\"sha256\": \"") + text.ranges(of: "\"zst\": \"") {
                let digest = String(text[range.upperBound...].prefix(64))
                for path in ["_cenarius/t/\(digest).json", "_cenarius/t/\(digest).zst", "_cenarius/t/\(digest).patch"] where site.origin.file(path) != nil {
                    if fault == .objectsMissing { site.origin.remove(path) } else { site.origin.put(path, Array("not it".utf8)) }
                }
            }
        case .older: site.origin.put("Routes.head", olderHead)
        case .patchCorrupt:
            var patches: [String] = []
            for range in text.ranges(of: "\"from\": \"") {
                let after = text[range.upperBound...]
                if let digest = after.range(of: "\"sha256\": \"") { patches.append("_cenarius/t/\(after[digest.upperBound...].prefix(64)).patch") }
            }
            #expect(!patches.isEmpty, "release 3's head names table patches: \(text)")
            for path in patches { site.origin.put(path, Array("not a patch".utf8)) }
            // And the one the head carries, which is checked against its SHA-256 like one fetched.
            let inline = try #require(text.range(of: "\"bytes\": \""), "the newest base's patch rides in the head")
            let end = try #require(text[inline.upperBound...].firstIndex(of: "\""))
            site.origin.put("Routes.head", text.replacingCharacters(in: inline.upperBound..<end, with: Data("not a patch".utf8).base64EncodedString()))
            site.origin.resetRequests()
        }
        _ = try site.sync("committed", "\(fault.rawValue): release 3 from the table")
        if fault == .patchCorrupt {
            let paths = site.origin.requests.map(\.path)
            #expect(paths.contains { $0.hasSuffix(".patch") } && paths.contains { $0.hasPrefix("_cenarius/t/") && $0.hasSuffix(".zst") } && site.pollsTheHead,
                    "a bad patch, then the compressed table, through the head: \(paths)")
        }
        #expect(try site.served().hasPrefix("<h1>release 3</h1>"), "\(fault.rawValue)")
        // Release 3's index names the head again; a head that is gone or unreadable is then
        // forgotten at the next poll, which the table answers, and the one after asks only the
        // table (the index says the remote has no compressed table beside it).
        let after = try Binary.run(site.device)
        #expect(["unchanged", "not-modified"].contains(try after.json()["outcome"] as? String), "\(fault.rawValue): \(after.stdout)\(after.stderr)")
        if fault == .gone || fault == .garbage {
            site.origin.resetRequests()
            _ = try site.sync("not-modified", "\(fault.rawValue): the second poll after")
            #expect(site.origin.requests.map(\.path) == ["Routes.json"], "\(fault.rawValue): the head is forgotten")
        }
    }

    /// Two publishes in the same folder: everything the first put under `_cenarius/` is still
    /// there, byte for byte, and `routes --check` finds a head that names another table.
    @Test func theStoreOnlyGrowsAndCheckFindsAStaleHead() async throws {
        let site = try await Site()
        let folder = try site.publish(1, upload: false)
        func store() -> [String: Data] {
            var files: [String: Data] = [:]
            let enumerator = FileManager.default.enumerator(atPath: folder + "/_cenarius")!
            while let relative = enumerator.nextObject() as? String {
                if let data = FileManager.default.contents(atPath: folder + "/_cenarius/" + relative) { files[relative] = data }
            }
            return files
        }
        let first = store()
        let firstHead = try #require(FileManager.default.contents(atPath: folder + "/Routes.head"))
        try FileManager.default.copyItem(atPath: folder, toPath: folder + "-old")
        try site.dir.write("v1/index.html", "<h1>release 1, again</h1>")
        #expect(try Binary.run(["routes", folder, "--compress", "--sign-key", site.dir.path("k1.key")]).status == 0)
        let second = store()
        for (name, bytes) in first {
            #expect(second[name] == bytes, "_cenarius/\(name) changed or went")
        }
        #expect(first[String(Self.legacyForm.dropFirst("_cenarius/".count))] == nil, "no mutable name under _cenarius/")
        #expect(second.count > first.count)
        // The same table again with another index (a delta pack from the first release): the
        // index under the table's hash stays as it was; the head names the new one by its hash.
        let again = try Binary.run(["routes", folder, "--compress", "--delta-from", folder + "-old", "--sign-key", site.dir.path("k1.key"), "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        // Run again over the same table: the forms and packs are read as the run before wrote them.
        let forms = try #require(try again.json()["forms"] as? [String: Any])
        #expect(forms["reusedPacks"] as? Bool == true && (forms["reusedForms"] as? Int ?? 0) > 0
                && forms["reusedForms"] as? Int == forms["compressedForms"] as? Int, "\(forms)")
        let third = store()
        for (name, bytes) in second {
            #expect(third[name] == bytes, "_cenarius/\(name) changed or went")
        }
        let head = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/Routes.head"))) as? [String: Any])
        let named = try #require(head["index"] as? String)
        #expect(second["i/\(named).json"] == nil && third["i/\(named).json"] != nil, "a new index, named by its hash")
        // A device on the table path (the head gone) reads the index under the table's hash, which
        // the sidecar vouches for: its files still come as compressed forms, not plain.
        try ReleaseBytesEndToEndTests.upload(folder, to: site.origin)
        site.origin.remove("Routes.head")
        let install = try site.sync("committed", "release 1, again, from the table")
        let report = try install.json()
        #expect((report["compressedFiles"] as? Int ?? 0) > 0 && report["formFallbacks"] as? Int == 0, "\(install.stdout)")
        #expect(try Binary.run(["routes", folder, "--check"]).status == 0)
        try firstHead.write(to: URL(fileURLWithPath: folder + "/Routes.head"))
        let stale = try Binary.run(["routes", folder, "--check"])
        #expect(stale.status == 4 && stale.stderr.contains("Routes.head names another table"), "\(stale.stderr)")

        // A store that lost an object the release index names (an upload that skipped a folder).
        #expect(try Binary.run(["routes", folder, "--compress", "--sign-key", site.dir.path("k1.key")]).status == 0)
        #expect(try Binary.run(["routes", folder, "--check"]).status == 0)
        let form = try #require(try FileManager.default.contentsOfDirectory(atPath: folder + "/_cenarius/z").first)
        try FileManager.default.removeItem(atPath: folder + "/_cenarius/z/" + form)
        let lost = try Binary.run(["routes", folder, "--check"])
        #expect(lost.status == 4 && lost.stderr.contains("_cenarius/z/\(form), which the release index names, is missing"), "\(lost.stderr)")
        #expect(try Binary.run(["routes", folder, "--compress", "--sign-key", site.dir.path("k1.key")]).status == 0, "routes writes it again")
        #expect(try Binary.run(["routes", folder, "--check"]).status == 0)
    }
}
