import Foundation
import Testing

/// G5: nothing blocks past --timeout. A `file://` remote whose table or listed file is a FIFO
/// (nobody ever writes it) is refused at once with exit 3 naming the file, instead of a sync
/// that waits for ever for a writer.
@Suite struct LocalRemoteTests {
    @Test func aFIFOAsTheTableOrAListedFileIsRefusedNotWaitedOn() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let remote = dir.path("remote")
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        let common = ["--remote", "file://" + remote, "--cache", dir.path("cache"), "--preset", dir.path("preset"), "--timeout", "5"]

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
