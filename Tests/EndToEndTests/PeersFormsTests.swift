import Foundation
import Testing
import TestOrigin

/// A release between devices that sync together crosses the LAN as the forms their owners took
/// from the origin (docs/peers.md "Forms between peers"): each owner keeps its share's patches by
/// their store names, the others decode them as they would the origin's, and the bytes from peers
/// are about the patches' size, not the files'.
@Suite(.awaitsCleanups) struct PeersFormsTests {
    /// Text files of `size` bytes that zstd shrinks and that change in one line from one release
    /// to the next: each release's patch for them is a few hundred bytes.
    static func textFiles(_ release: Int, count: Int, size: Int = 60_000) -> [String: Data] {
        var files: [String: Data] = [:]
        for n in 0..<count {
            var state = UInt64(n + 1)
            let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
            var text = "// release \(release) of file \(n)\n"
            while text.utf8.count < size {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                text += words[Int(state >> 61)] + (state >> 40 & 7 == 0 ? "\n" : " ")
            }
            files["text/file-\(n).txt"] = Data(text.utf8)
        }
        return files
    }

    @Test func aReleaseBetweenSwarmingDevicesMovesPatchesNotFiles() async throws {
        let site = try await HeadAndStoreTests.Site()
        let devices = try PeersSwarmTests.started(site, 3, files: Self.textFiles(1, count: 12))
        defer { for device in devices { _ = device.daemon.terminate() } }
        // A first install's shares come as compressed forms, and the owners keep them.
        let kept1 = devices.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: site.dir.path("\($0.name)/cache/peer-forms"))) ?? [] }
        #expect(kept1.contains { $0.hasSuffix(".zst") && !$0.contains("-") }, "compressed forms kept: \(kept1)")
        let before = try devices.map { try PeersSwarmTests.synced(site, $0.name)["bytesFromPeers"] as? Int ?? 0 }

        try PeersSwarmTests.release(2, files: Self.textFiles(2, count: 12), on: site, to: devices)
        for device in devices { #expect(try PeersSwarmTests.verified(site, device.name)) }

        // Each patch once from the origin, kept by its owner under its store name.
        let patches = PeersSwarmTests.objectCounts(site.origin).filter { $0.key.contains("-") }
        #expect(patches.count >= 12 && patches.values.allSatisfy { $0 == 1 }, "\(patches)")
        var kept: [String: Int] = [:]
        for device in devices {
            let folder = site.dir.path("\(device.name)/cache/peer-forms")
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.contains("-") {
                kept[name] = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int
            }
        }
        #expect(Set(kept.keys) == Set(patches.keys), "kept \(kept.keys.sorted()), the origin sent \(patches.keys.sorted())")
        // The others took them from their owners: about (devices - 1) × the patches' bytes crossed
        // the LAN (and the few small files without a patch), where the changed files are 12 × 60 kB.
        let fromPeers = try zip(devices, before).map { try (PeersSwarmTests.synced(site, $0.name)["bytesFromPeers"] as? Int ?? 0) - $1 }
        let patchBytes = kept.values.reduce(0, +)
        #expect(fromPeers.allSatisfy { $0 > 0 }, "every device took patches from its peers: \(fromPeers)")
        #expect(fromPeers.reduce(0, +) <= 2 * patchBytes + 3 * 2 * 8_000, "bytes on the LAN \(fromPeers) for \(patchBytes) bytes of patches")
    }

    /// The forms a device kept, by name and size.
    static func kept(_ site: HeadAndStoreTests.Site, _ name: String) -> [String: Int] {
        let folder = site.dir.path("\(name)/cache/peer-forms")
        var kept: [String: Int] = [:]
        for form in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            kept[form] = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + form)[.size] as? Int) ?? 0
        }
        return kept
    }

    /// An asker keeps the forms it took from their owners and serves them on (docs/peers.md): once
    /// the owners are gone, a device that asks only it takes every file from it, as forms, and
    /// nothing from the origin.
    @Test func aFormTakenFromAPeerIsServedOnWhenItsOwnerIsGone() async throws {
        let site = try await HeadAndStoreTests.Site()
        let devices = try PeersSwarmTests.started(site, 3, files: Self.textFiles(1, count: 12))
        defer { for device in devices { _ = device.daemon.terminate() } }
        // Every device holds every form the origin sent: its own share's, and those it took from the others.
        let sent = Set(PeersSwarmTests.objectCounts(site.origin).keys.filter { $0.hasSuffix(".zst") })
        #expect(sent.count >= 12, "\(sent)")
        for device in devices {
            let kept = Set(Self.kept(site, device.name).keys)
            #expect(kept == sent, "\(device.name) kept \(kept.sorted()), the origin sent \(sent.sorted())")
        }
        // The owners gone (one killed, one stopped): a device asking only the one left takes its all from it.
        devices[0].daemon.process.signal(SIGKILL)
        _ = devices[2].daemon.terminate()
        let arguments = devices[1].daemon.process.arguments ?? []
        let listen = try #require(arguments.firstIndex(of: "--peer-listen").map { arguments[$0 + 1] })
        site.origin.resetRequests()
        let sync = try PeersTests.sync(site, "e", ["--peer", "http://" + listen])
        #expect(sync["outcome"] as? String == "committed")
        #expect(try PeersTests.served(site, "e") == "<h1>release 1</h1>")
        #expect(PeersTests.objectRequests(site.origin).isEmpty, "the origin sent objects a peer held: \(PeersTests.objectRequests(site.origin))")
        // As forms: about their bytes crossed the LAN, where the text files alone are 12 × 60 kB.
        let formBytes = Self.kept(site, devices[1].name).values.reduce(0, +)
        let fromPeers = try #require(sync["bytesFromPeers"] as? Int)
        #expect(sync["bytesFromOrigin"] as? Int == 0 && fromPeers <= formBytes + 16_000, "\(fromPeers) from peers, \(formBytes) bytes of forms kept")
        #expect(try Device("e", in: site.dir).verified())
    }
}
