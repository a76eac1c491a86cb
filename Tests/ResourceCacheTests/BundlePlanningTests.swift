import Testing
@testable import ResourceCache
@testable import RouteSync

/// The forms plan of an import (docs/bundles.md): kept to what the bundle holds, the finder's
/// answer. A form, a patch or a delta pack the bundle lacks is never planned, and the pack it
/// holds is taken for files that have no other source there, whatever their share of the site.
@Suite struct BundlePlanningTests {
    func h(_ c: Character) -> ContentHash { ContentHash(hex: String(repeating: c, count: 32))! }

    /// Two files; release index with a patch of the first from `9`, the whole pack, and a delta pack
    /// from the table the device holds (which holds `9`).
    func release() throws -> (RouteEntry, RouteEntry, RouteTable, ReleaseIndex, FormPlan.Held) {
        let one = RouteEntry(uri: try URIPath(validating: "a.js"), hash: h("1"), size: 60)
        let two = RouteEntry(uri: try URIPath(validating: "b.js"), hash: h("2"), size: 40)
        var index = ReleaseIndex(table: "", patches: [.init(target: h("1"), base: h("9"))], pack: .init(hash: h("e"), size: 70, files: 2))
        index.deltaPacks = [.init(from: "held", hash: h("d"), size: 10, bases: [h("9"), nil])]
        return (one, two, try RouteTable(entries: [two, one]), index, FormPlan.Held(digest: "held", hashes: [h("9")]))
    }

    @Test func aBundleListingKeepsThePlanToWhatItHolds() throws {
        let (one, _, table, index, held) = try release()
        // Anywhere: the delta pack from the table the device holds.
        let online = FormPlan(downloads: [one], table: table, index: index, holding: .init(held) { $0 == h("9") })
        #expect(online.pack?.hash == h("d"))
        // A first-install bundle holds the pack alone: one file of two is too little of the site for a
        // pack online, and here its only source; the patch and the form the bundle lacks are not planned.
        let pack = ReleaseIndex.packPath(h("e"))
        let bundled = FormPlan(downloads: [one], table: table, index: index, holding: .init(held) { $0 == h("9") }, scope: .init(available: { $0 == pack }))
        #expect(bundled.pack?.hash == h("e"))
        #expect(bundled.sources[h("1")] == [.member(0), .plain])
        // A bundle with the patch: the patch, no pack.
        let patch = ReleaseIndex.patchPath(.init(target: h("1"), base: h("9")))
        let patched = FormPlan(downloads: [one], table: table, index: index, holding: .init(held) { $0 == h("9") }, scope: .init(available: { $0 == patch }))
        #expect(patched.pack == nil && patched.sources[h("1")] == [.patch(base: h("9")), .plain])
    }

    /// A device fetching its share of a release for its LAN peers (docs/peers.md) takes the delta
    /// pack only when most of it is its share: else every device would fetch the whole release.
    @Test func aShareTakesTheDeltaPackOnlyWhenItIsMostOfIt() throws {
        let (one, two, table, index, held) = try release()
        let holds = { (hash: ContentHash) in hash == h("9") }
        // 60 of the pack's 100 bytes: its own patch, not the pack.
        let part = FormPlan(downloads: [one], table: table, index: index, holding: .init(held, holds: holds), scope: .init(share: true))
        #expect(part.pack == nil && part.sources[h("1")]?.first == .patch(base: h("9")))
        // All of it: the pack, as for a device alone.
        let all = FormPlan(downloads: [one, two], table: table, index: index, holding: .init(held, holds: holds), scope: .init(share: true))
        #expect(all.pack?.hash == h("d"))
    }

    @Test func aLongNameGoesInAPaxHeaderAndReadsBack() throws {
        let name = "_cenarius/p/" + String(repeating: "a", count: 64) + "-" + String(repeating: "b", count: 64) + ".zst"
        let blocks = TarHeader.file(name, size: 5, mtime: 1_795_000_000)
        #expect(blocks.count == 3 * TarHeader.block)
        guard case .pax(let size, false) = try TarHeader.parse(blocks[0..<512], at: 0) else { Issue.record("no pax header first"); return }
        let values = try TarHeader.paxValues(Array(blocks[512..<(512 + Int(size))]), at: 512)
        #expect(values.path == name)
        #expect(try TarHeader.parse(blocks[1024..<1536], at: 1024) == .file(name: String(name.prefix(100)), size: 5))
        #expect(BundleLayout.isMember(name) && !BundleLayout.isMember("_cenarius/../etc/passwd") && !BundleLayout.isMember("/Routes.head"))
        var damaged = blocks
        damaged[1024 + 130] ^= 1
        #expect(throws: CenariusError.self) { try TarHeader.parse(damaged[1024..<1536], at: 1024) }
    }

    @Test func aManifestReadsBackAndRefusesWhatIsNotOne() throws {
        let manifest = BundleManifest(created: 1, releases: [.init(channel: "beta", head: "Routes.beta.head", version: 7, release: "r2",
                                                                  table: String(repeating: "a", count: 64), from: [String(repeating: "b", count: 64)],
                                                                  firstInstall: false)],
                                      members: [.init(name: "Routes.beta.head", size: 3)])
        #expect(try BundleManifest.parse(manifest.serialized(), source: "m") == manifest)
        #expect(manifest.releases[0].serves(String(repeating: "b", count: 64)) && !manifest.releases[0].serves(nil))
        #expect(throws: CenariusError.self) { try BundleManifest.parse(Array(#"{"format": "cenarius-bundle-1", "releases": [], "members": [{"name": "../x", "size": 1}]}"#.utf8), source: "m") }
    }
}
