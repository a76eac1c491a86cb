import Foundation
import Testing
import TestOrigin

/// What a sync counts on is on disk before it counts: an object adopted into the store has its
/// bytes fsynced before its name appears (rename), and its folder after, so that a power cut
/// cannot leave a present-but-empty object that the next sync links into a generation. Observed
/// with strace on the built binary (the system calls are the contract here).
@Suite(.awaitsCleanups) struct DurabilityTests {
    static let strace = "/usr/bin/strace"

    @Test(.enabled(if: Requirement.inCI || FileManager.default.isExecutableFile(atPath: strace), "needs strace (make test-deps installs it)"))
    func anAdoptedObjectIsSyncedBeforeItsNameAppears() async throws {
        let origin = try await TestOrigin()
        let dir = try Scratch()
        Cleanups.add { await origin.shutdown(); dir.remove() }
        origin.publish(["index.html": "one", "app.js": "two()", "style.css": "three {}"])
        let trace = dir.path("trace.log")
        let run = try Binary.run(["-f", "-y", "-e", "trace=fsync,rename,renameat,renameat2", "-o", trace, Binary.path,
                                  "sync", "--remote", origin.url, "--cache", dir.path("cache"), "--preset", dir.path("preset")],
                                 executable: Self.strace)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        let adoptions = lines.indices.filter { lines[$0].contains("rename") && lines[$0].contains(".part\"") && lines[$0].contains("/objects/") && lines[$0].hasSuffix(" = 0") }
        #expect(adoptions.count == 3, "three objects adopted: \(adoptions.map { lines[$0] })")
        for index in adoptions {
            let line = lines[index]
            let part = try #require(line.split(separator: "\"").first { $0.hasSuffix(".part") })
            #expect(lines[..<index].contains { $0.contains("fsync(") && $0.contains(String(part)) }, "the bytes of \(part) were synced before: \(line)")
            // strace -y names each descriptor's path: the object's folder is the `<…/objects/xx>` one.
            let shard = try #require(line.split(separator: "<").dropFirst().map { $0.prefix { $0 != ">" } }.last { $0.contains("/objects/") })
            #expect(lines[(index + 1)...].contains { $0.contains("fsync(") && $0.contains("<" + shard + ">") }, "its folder was synced after: \(line)")
        }
    }
}
