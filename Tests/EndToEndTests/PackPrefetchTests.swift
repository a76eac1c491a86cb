import Foundation
import Testing
import TestOrigin

/// The pack a head names comes in slices over connections of its own, started as soon as the
/// head is read (B8 v2), through the built binary: a first install opens those connections beside
/// the request for the head and fetches the solid pack in slices; a release fetches the delta
/// pack the head names beside its patch; a pack named by a head that the index does not name is
/// stopped and removed, and the sync takes what the index names.
@Suite(.awaitsCleanups) struct PackPrefetchTests {
    /// Files large enough for packs worth slicing (over 512 KiB compressed), new in every release,
    /// half of each shared with the others: one stream of them (the solid pack) is smaller than
    /// their separate frames, as on a real site.
    static func large(_ release: Int) -> [String: Data] {
        var state = UInt64(release) &* 0x9E3779B97F4A7C15
        func letters(_ count: Int) -> [UInt8] {
            (0..<count).map { _ -> UInt8 in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: state >> 60) &+ 0x61
            }
        }
        let shared = letters(150_000)
        var files: [String: Data] = [:]
        for n in 0..<8 { files["media/blob-\(n).txt"] = Data(shared + letters(150_000)) }
        return files
    }

    func gets(_ origin: TestOrigin, _ path: String) -> [TestOrigin.Request] { origin.requests(for: path).filter { $0.method == "GET" } }

    func packs(_ site: HeadAndStoreTests.Site, _ n: Int) throws -> (solid: String, delta: String?) {
        let head = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site.dir.path("v\(n)/Routes.head")))) as? [String: Any])
        let solid = try #require((head["solidPack"] as? [String: Any])?["form"] as? String, "the head names the solid pack")
        let delta = ((head["table"] as? [String: Any])?["patches"] as? [[String: Any]])?.first?["pack"] as? String
        return ("_cenarius/pack/\(solid).pack", delta.map { "_cenarius/pack/\($0).pack" })
    }

    func leftovers(_ site: HeadAndStoreTests.Site) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: site.dir.path("device/cache/tmp"))) ?? []
    }

    @Test func aFirstInstallAndAReleaseFetchTheirPacksInSlices() async throws {
        let site = try await HeadAndStoreTests.Site()
        try site.publish(1, extra: Self.large(1))
        let first = try packs(site, 1)
        let install = try site.sync("committed", "first install").json()
        #expect(install["formFallbacks"] as? Int == 0)
        #expect(try site.served() == "<h1>release 1</h1>")
        // The connections were opened beside the head's request, then carried the pack's slices.
        #expect(site.origin.requests(for: "Routes.head").filter { $0.method == "HEAD" }.count == 16)
        let slices = gets(site.origin, first.solid)
        #expect(slices.count >= 4 && slices.allSatisfy { $0.headers["range"] != nil }, "\(slices.map(\.headers))")
        #expect(leftovers(site).isEmpty)

        try site.publish(2, extra: Self.large(2))
        let second = try packs(site, 2)
        let delta = try #require(second.delta, "the head names the delta pack from release 1")
        site.origin.resetRequests()
        let release = try site.sync("committed", "release 2").json()
        #expect(release["formFallbacks"] as? Int == 0)
        #expect(try site.served() == "<h1>release 2</h1>")
        #expect(gets(site.origin, delta).count >= 4)
        #expect(site.origin.requests.allSatisfy { $0.method == "GET" }, "a release opens no connection ahead")
        #expect(leftovers(site).isEmpty)
    }

    /// A head whose hint names another pack than the index (a hint is not trusted): the pack
    /// fetched for it is stopped and removed, and the release comes through the index's.
    @Test func aPackTheIndexDoesNotNameIsDropped() async throws {
        let site = try await HeadAndStoreTests.Site()
        let folder = try site.publish(1, upload: false, extra: Self.large(1))
        let (solid, _) = try packs(site, 1)
        let index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/_cenarius/index/" + (try indexName(folder)) + ".json"))) as? [String: Any])
        let perFile = try #require((index["pack"] as? [String: Any])?["form"] as? String)
        let solidName = String(solid.dropFirst("_cenarius/pack/".count).dropLast(".pack".count))
        let head = try #require(site.dir.read("v1/Routes.head"))
        try site.dir.write("v1/Routes.head", head.replacingOccurrences(of: solidName, with: perFile))
        try ReleaseBytesEndToEndTests.upload(folder, to: site.origin)
        let install = try site.sync("committed", "first install").json()
        #expect(install["formFallbacks"] as? Int == 0)
        #expect(try site.served() == "<h1>release 1</h1>")
        #expect(gets(site.origin, solid).count >= 4, "the index's pack")
        #expect(leftovers(site).isEmpty)
    }

    func indexName(_ folder: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/_cenarius/index")
        return String(try #require(names.first).dropLast(".json".count))
    }
}
