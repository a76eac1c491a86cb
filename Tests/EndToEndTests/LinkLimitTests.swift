import Foundation
import Testing
import TestOrigin

/// G5: identical content in many uris never exhausts an inode's hard links. Every kept generation
/// links each uri to its object, so a site of many identical files (empty ones, say) reaches the
/// file system's limit within a few releases: ext4 stops at 65,000 links to one inode. The cache
/// sits on a small ext4 image the test makes; past the limit (link(2) says EMLINK), objects are
/// copied and syncs go on.
@Suite(.serialized, .awaitsCleanups) struct LinkLimitTests {
    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// A 96 MiB ext4 file system on a loop device at `mountPoint`, or why there cannot be one.
    static func mountExt4(image: String, at mountPoint: String) -> String? {
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, 96 << 20) == 0 else { return "cannot create \(image)" }
        try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard run("/sbin/mkfs.ext4", ["-q", "-F", "-N", "65536", image]) else { return "mkfs.ext4 failed or is missing (e2fsprogs)" }
        guard run("/bin/mount", ["-t", "ext4", "-o", "loop", image, mountPoint]) else { return "mount -o loop not permitted here (needs root and a loop device)" }
        return nil
    }

    @Test func identicalContentInManyUrisOutlivesTheLinkLimit() async throws {
        let origin = try await TestOrigin()
        let dir = try Scratch()
        let mountPoint = dir.path("fs")
        if let reason = Self.mountExt4(image: dir.path("fs.img"), at: mountPoint) {
            dir.remove()
            await origin.shutdown()
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("LinkLimitTests cannot run in CI: \(reason)")
            } else {
                print("LinkLimitTests: skipped: \(reason)")
            }
            return
        }
        Cleanups.add { await origin.shutdown(); _ = Self.run("/bin/umount", [mountPoint]); dir.remove() }
        let common = ["--remote", origin.url, "--cache", mountPoint + "/cache", "--preset", dir.path("preset"), "--keep", "5"]
        // 17,000 empty files, five generations kept: 51,001 links after the third release, past
        // 65,000 in the fourth, and every one a copy in the fifth.
        var files: [String: String] = [:]
        for i in 0..<17_000 { files["empty/\(i / 1000)/\(i).txt"] = "" }
        for release in 1...5 {
            files["index.html"] = "release \(release)"
            origin.publish(files)
            let sync = try Binary.run(["sync", "--json"] + common)
            #expect(sync.status == 0, "release \(release): \(sync.stderr)")
            #expect(try sync.json()["outcome"] as? String == "committed", "release \(release)")
        }
        let resolved = try Binary.run(["resolve", "empty/16/16999.txt", "--offline", "--json"] + common)
        #expect(try resolved.json()["source"] as? String == "cache", "\(resolved.stderr)")
        let index = try Binary.run(["resolve", "index.html", "--offline"] + common)
        #expect(try String(contentsOfFile: index.stdout.trimmingCharacters(in: .newlines), encoding: .utf8) == "release 5")
        let verify = try Binary.run(["verify"] + common)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }
}
