import Foundation
import Testing
import TestOrigin

/// B8 as a user meets it: `routes --delta-from` on the publisher's side, `sync` and `seed` on the
/// device's, through the built binary.
@Suite(.awaitsCleanups) struct ReleaseBytesEndToEndTests {
    /// Text shaped like a minified bundle.
    static func bundle(_ seed: UInt64, _ bytes: Int) -> String {
        var state = seed
        var out = ""
        let words = ["function", "return", "const", "let", "this", "props", "state", "render", "=>", "{", "}", "null"]
        while out.utf8.count < bytes {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            out += words[Int(state >> 60) % words.count] + String(state >> 48 & 0xFFF, radix: 36) + " "
        }
        return out
    }

    /// Uploads a published folder as it is (its files, its table, its signature, its `_cenarius/`).
    static func upload(_ folder: String, to origin: TestOrigin) throws {
        let enumerator = FileManager.default.enumerator(atPath: folder)!
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            origin.put(relative, Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + relative))))
        }
    }

    @Test func publishWithDeltasThenSyncAndSeedThroughThem() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        try dir.keygen("release")
        let main = Self.bundle(1, 300_000)
        try dir.write("v1/index.html", "<script src=main.1a2b3c4d.js></script>")
        try dir.write("v1/main.1a2b3c4d.js", main)
        try dir.write("v1/style.css", Self.bundle(2, 50_000))
        let v1 = try Binary.run(["routes", dir.path("v1"), "--compress", "--sign-key", dir.path("release.key"), "--json"])
        #expect(v1.status == 0, "\(v1.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.path("v1/_cenarius/pack")))

        try dir.write("v2/index.html", "<script src=main.9f8e7d6c.js></script>")
        try dir.write("v2/main.9f8e7d6c.js", main.replacingOccurrences(of: "render", with: "paint", options: [], range: main.range(of: "render")))
        try dir.write("v2/style.css", dir.read("v1/style.css")!)
        let v2 = try Binary.run(["routes", dir.path("v2"), "--delta-from", dir.path("v1"), "--sign-key", dir.path("release.key"), "--json"])
        #expect(v2.status == 0, "\(v2.stderr)")
        let forms = try #require(try v2.json()["forms"] as? [String: Any])
        #expect(forms["patches"] as? Int == 2, "\(forms)")
        // The table lists the site, never the forms.
        #expect(!(dir.read("v2/Routes.json") ?? "").contains("_cenarius"))

        let common = ["--remote", origin.url] + Device(in: dir).flags + ["--public-key", dir.path("release.pub")]
        try Self.upload(dir.path("v1"), to: origin)
        let first = try Binary.run(["sync", "--json"] + common)
        #expect(first.status == 0, "\(first.stderr)")
        let firstReport = try first.json()
        #expect(firstReport["compressedFiles"] as? Int == 3)
        #expect(try #require(firstReport["bytesFetched"] as? Int) < (firstReport["bytesHeld"] as? Int ?? 0))

        try Self.upload(dir.path("v2"), to: origin)
        let sync = try Binary.run(["sync", "--json"] + common)
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try sync.json()
        #expect(report["outcome"] as? String == "committed")
        #expect(report["patchedFiles"] as? Int == 2)
        #expect(try #require(report["bytesFetched"] as? Int) < 2000, "\(report)")
        let resolved = try Binary.run(["resolve", "main.9f8e7d6c.js"] + common)
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .whitespacesAndNewlines), encoding: .utf8) == dir.read("v2/main.9f8e7d6c.js"))
        #expect(try Binary.run(["verify"] + common).status == 0)

        // CI seeding a preset that holds v1 goes through the same patches.
        try FileManager.default.copyItem(atPath: dir.path("v1"), toPath: dir.path("ci"))
        try FileManager.default.removeItem(atPath: dir.path("ci/_cenarius"))
        let seed = try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("ci"), "--public-key", dir.path("release.pub"), "--json"])
        #expect(seed.status == 0, "\(seed.stderr)")
        #expect(try seed.json()["patchedFiles"] as? Int == 2)
        #expect(try #require(try seed.json()["bytesFetched"] as? Int) < 2000)
        #expect(dir.read("ci/main.9f8e7d6c.js") == dir.read("v2/main.9f8e7d6c.js"))
        #expect(try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("ci"), "--check"]).status == 0)
    }
}
