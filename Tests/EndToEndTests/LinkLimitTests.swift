import Foundation
import Testing
import TestOrigin

/// G5: identical content in many uris never exhausts an inode's hard links. Every kept generation
/// links each uri to its object, so a site of many identical files (empty ones, say) reaches the
/// file system's limit within a few releases: ext4 stops at 65,000 links to one inode. The cache
/// sits on a small ext4 image the test makes; past the limit (link(2) says EMLINK), objects are
/// copied and syncs go on.
@Suite(.serialized, .awaitsCleanups) struct LinkLimitTests {
    @Test(.enabled(if: Requirement.inCI || Requirement.ext4LoopMounts, "needs root, a loop device and mkfs.ext4 for a small ext4 image"))
    func identicalContentInManyUrisOutlivesTheLinkLimit() async throws {
        let origin = try await TestOrigin()
        let dir = try Scratch()
        let mountPoint = dir.path("fs")
        guard Requirement.mount(ext4Image: dir.path("fs.img"), megabytes: 96, inodes: 65536, at: mountPoint) else {
            Issue.record("no ext4 image could be made and mounted: the link limit (G5) was not exercised")
            dir.remove()
            await origin.shutdown()
            return
        }
        Cleanups.add { await origin.shutdown(); Requirement.unmount(mountPoint); dir.remove() }
        let common = ["--remote", origin.url] + Device(cache: mountPoint + "/cache", preset: dir.path("preset")).flags + ["--keep", "5"]
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
