import Foundation
import Testing
import TestOrigin

/// What a sync counts on is on disk before it counts: an object adopted into the store has its
/// bytes synced (one syncfs for all of a sync's files) after its file was written and closed and
/// before its name appears (rename), so that a power cut cannot leave a present-but-empty object
/// that the next sync links into a generation; and the names are synced before the generation
/// that links them becomes current. Observed with strace on the built binary (the system calls
/// are the contract here).
@Suite(.awaitsCleanups) struct DurabilityTests {
    static let strace = "/usr/bin/strace"

    @Test(.enabled(if: Requirement.inCI || FileManager.default.isExecutableFile(atPath: strace), "needs strace (make test-deps installs it)"))
    func anAdoptedObjectIsSyncedBeforeItsNameAppears() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "one", "app.js": "two()", "style.css": "three {}"])
        let trace = dir.path("trace.log")
        let run = try Binary.run(["-f", "-y", "-e", "trace=close,fsync,syncfs,rename,renameat,renameat2", "-o", trace, Binary.path,
                                  "sync", "--remote", origin.url] + Device(in: dir).flags,
                                 executable: Self.strace)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        let adoptions = lines.indices.filter { lines[$0].contains("rename") && lines[$0].contains(".part\"") && lines[$0].contains("/objects/") && lines[$0].hasSuffix(" = 0") }
        #expect(adoptions.count == 3, "three objects adopted: \(adoptions.map { lines[$0] })")
        let syncs = lines.indices.filter { lines[$0].contains("syncfs(") && lines[$0].hasSuffix(" = 0") }
        for index in adoptions {
            let line = lines[index]
            let part = try #require(line.split(separator: "\"").first { $0.hasSuffix(".part") })
            // strace -y names each descriptor's path: the last close of the downloaded file.
            let written = try #require(lines[..<index].lastIndex { $0.contains("close(") && $0.contains(String(part) + ">") },
                                       "the download of \(part) was closed before its adoption")
            #expect(syncs.contains { $0 > written && $0 < index }, "the bytes of \(part) were synced between its last close and its rename: \(line)")
        }
        let switched = try #require(lines.indices.first { lines[$0].contains("rename") && lines[$0].contains(".building\", ") },
                                    "the generation was renamed into place")
        #expect(syncs.contains { $0 > adoptions.max() ?? 0 && $0 < switched }, "the objects' names were synced before the generation that links them")
    }
}
