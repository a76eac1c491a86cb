import Foundation
import Testing
import TestOrigin

/// G5: nothing blocks past --timeout. A `file://` remote whose table or listed file is a FIFO
/// (nobody ever writes it) is refused at once with exit 3 naming the file, instead of a sync
/// that waits for ever for a writer.
@Suite struct LocalRemoteTests {
    @Test func aFIFOAsTheTableOrAListedFileIsRefusedNotWaitedOn() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let remote = dir.path("remote")
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        let common = ["--remote", "file://" + remote] + Device(in: dir).flags + ["--timeout", "5"]

        #expect(mkfifo(remote + "/Routes.json", 0o644) == 0)
        let table = try Binary.run(["sync"] + common, killAfter: 30)
        #expect(table.status == 3, "\(table.stderr)")
        #expect(table.stderr.contains("Routes.json") && table.stderr.contains("FIFO"), "\(table.stderr)")

        unlink(remote + "/Routes.json")
        try dir.write("remote/index.html", "hello")
        try #require(try Binary.run(["routes", remote]).status == 0)
        unlink(remote + "/index.html")
        #expect(mkfifo(remote + "/index.html", 0o644) == 0)
        let file = try Binary.run(["sync"] + common, killAfter: 30)
        #expect(file.status == 3, "\(file.stderr)")
        #expect(file.stderr.contains("index.html") && file.stderr.contains("FIFO"), "\(file.stderr)")
    }
}

/// A `file://` remote is a remote like any other: a first install, a release that fetches only
/// what changed, compressed forms and patches when the folder was published with them (B8), and
/// every uri resolving to its verified content, from the built binary.
@Suite struct FileRemoteTests {
    @Test func aFileRemoteSyncsReleasesAsAnHTTPOneDoes() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let common = ["--remote", "file://" + dir.path("remote")] + Device(in: dir).flags
        let bundle = String(repeating: "function render(props) { return props.children; }\n", count: 2000)
        try dir.write("remote/index.html", "<script src=app.js></script>")
        try dir.write("remote/app.js", bundle + "// 1")
        try dir.write("old/index.html", "<script src=app.js></script>")
        try dir.write("old/app.js", bundle + "// 1")
        try #require(try Binary.run(["routes", dir.path("remote")]).status == 0)
        let first = try Binary.run(["sync", "--json"] + common)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try first.json()["downloadedFiles"] as? Int == 2, "\(first.stdout)")
        // A folder answers no 304: the same table bytes again are "unchanged", and nothing is fetched.
        let again = try Binary.run(["sync", "--json"] + common).json()
        #expect(again["outcome"] as? String == "unchanged" && again["downloadedFiles"] as? Int == 0, "\(again)")

        // The next release, published with a patch against the one the device holds.
        try #require(try Binary.run(["routes", dir.path("old"), "--compress"]).status == 0)
        try dir.write("remote/app.js", bundle + "// 2")
        try #require(try Binary.run(["routes", dir.path("remote"), "--delta-from", dir.path("old")]).status == 0)
        let release = try Binary.run(["sync", "--json"] + common)
        #expect(release.status == 0, "\(release.stderr)")
        let report = try release.json()
        #expect(report["downloadedFiles"] as? Int == 1 && report["patchedFiles"] as? Int == 1, "\(release.stdout)")
        #expect((report["bytesFetched"] as? Int ?? .max) < 1000, "\(release.stdout)")
        let resolved = try Binary.run(["resolve", "app.js", "--json", "--offline"] + common).json()
        let path = try #require(resolved["path"] as? String)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == bundle + "// 2")
        #expect(try Binary.run(["verify"] + common.dropFirst(2)).status == 0)
    }
}

/// A table no file system can hold is an invalid table (exit 4, naming the entries), refused
/// when read: not a storage error about an internal `.building` path half-way through a build.
@Suite(.awaitsCleanups) struct UnholdableTableTests {
    @Test func aFileThatIsAFolderOrAnOverlongNameIsExit4() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        try #require(try Binary.run(["sync"] + common).status == 0)

        let hash = TestOrigin.md5(Array("x".utf8))
        origin.put("conf", "x")
        origin.put("conf/b", "x")
        origin.put("Routes.json", #"[{"uri":"conf","hash":"\#(hash)"},{"uri":"conf/b","hash":"\#(hash)"}]"#)
        let both = try Binary.run(["sync"] + common)
        #expect(both.status == 4, "\(both.stderr)")
        #expect(both.stderr.contains("\"conf\"") && both.stderr.contains("\"conf/b\""), "\(both.stderr)")
        #expect(!both.stderr.contains(".building"))

        let long = String(repeating: "n", count: 300)
        origin.put(long, "x")
        origin.put("Routes.json", #"[{"uri":"\#(long)","hash":"\#(hash)"}]"#)
        let overlong = try Binary.run(["sync"] + common)
        #expect(overlong.status == 4, "\(overlong.stderr)")
        #expect(overlong.stderr.contains("longer than 255 bytes"), "\(overlong.stderr)")
        let resolved = try Binary.run(["resolve", "index.html", "--offline"] + common)
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8) == "v1", "the previous table stays in force")
    }
}

/// A preset table is capped like a remote one (64 MiB): a bigger one is refused before it is read,
/// rather than parsed at several times its size by every `resolve`.
@Suite struct PresetTableCapTests {
    @Test func anOversizedPresetTableIsRefusedUnread() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path("preset"), withIntermediateDirectories: true)
        // Sparse: 80 MiB that cost no disk.
        #expect(FileManager.default.createFile(atPath: dir.path("preset/Routes.json"), contents: Data("[".utf8)))
        #expect(truncate(dir.path("preset/Routes.json"), 80 << 20) == 0)
        let resolved = try Device(in: dir).run(["resolve", "index.html", "--offline"])
        #expect(resolved.status == 4, "\(resolved.stderr)")
        #expect(resolved.stderr.contains("more than the 67108864 a route table may be"), "\(resolved.stderr)")
    }
}
