import Foundation
import RouteSync
import Testing
import TestOrigin

/// The publisher's defects of issue 38, each as a user met it, through the built binary: signing
/// a changed folder in place, several keys in one run, a compressed table left over or failing,
/// a halt on a signed remote without a key, a failed pack fetched again, forged fleet reports.
@Suite(.awaitsCleanups) struct PublisherDefectTests {
    /// A folder published with `routes`, synced from `file://` by one device.
    struct Setup {
        let dir: Scratch
        var site: String { dir.path("w") }

        init() throws {
            dir = try Scratch.forTest()
            for key in ["k", "k2"] { try dir.keygen(key) }
        }

        func routes(_ arguments: [String]) throws -> Binary.Run {
            let run = try Binary.run(["routes", site] + arguments)
            #expect(run.status == 0, "routes \(arguments): \(run.stderr)")
            return run
        }

        func sync(_ device: String, _ extra: [String] = []) throws -> Binary.Run {
            try Device(device, in: dir).run(["sync", "--json", "--remote", "file://" + site] + extra)
        }

        func sidecar() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site + "/Routes.json.sig"))) as? [String: Any])
        }

        func key(_ name: String) -> String { dir.path(name + ".key") }
        func pub(_ name: String) -> String { dir.path(name + ".pub") }
    }

    static let legacyForm = "_cenarius/Routes.json.zst"

    /// What `routes --compress` of a version before heads left in `root`: the index saying so, the
    /// compressed table at its one mutable name (the table, then the index), and, with `headless`,
    /// no head. `sign`: the `--sign-key` arguments the folder was published with; `routes` runs
    /// again with them, and signs over the index it finds (it never rewrites one).
    static func earlierVersionsTableForm(in root: String, headless: Bool = true, sign: [String] = []) throws {
        let table = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/Routes.json")))
        let indexPath = root + "/" + ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(table))
        var index = try ReleaseIndex.parse(Array(try Data(contentsOf: URL(fileURLWithPath: indexPath))), source: indexPath)
        index.tableForm = true
        try Data(index.serialized()).write(to: URL(fileURLWithPath: indexPath))
        if !sign.isEmpty { #expect(try Binary.run(["routes", root, "--compress"] + sign).status == 0) }
        try Data(Zstd.compress(table) + Zstd.compress(index.serialized())).write(to: URL(fileURLWithPath: root + "/" + legacyForm))
        if headless { try FileManager.default.removeItem(atPath: root + "/Routes.head") }
    }

    @Test func reSigningAChangedFolderInPlaceSignsANewVersionThatDevicesAdopt() throws {
        let s = try Setup()
        let trust = ["--public-key", s.pub("k")]
        try s.dir.write("w/a.txt", "one\n")
        _ = try s.routes(["--sign-key", s.key("k")])
        let first = try s.sidecar()["version"] as? Int
        #expect(try s.sync("d", trust).status == 0)
        try s.dir.write("w/a.txt", "two\n")
        _ = try s.routes(["--sign-key", s.key("k")])
        let second = try s.sidecar()["version"] as? Int
        #expect(try #require(second) > (try #require(first)))
        let adopted = try s.sync("d", trust)
        #expect(adopted.status == 0, "\(adopted.stderr)")
        #expect(try adopted.json()["outcome"] as? String == "committed")

        // The same unchanged folder signed again by the same key: the same version (nothing new).
        _ = try s.routes(["--sign-key", s.key("k")])
        #expect(try s.sidecar()["version"] as? Int == second)

        // Another key over a changed folder: a new version with its signature alone, never the
        // first key's stale one.
        try s.dir.write("w/a.txt", "three\n")
        _ = try s.routes(["--sign-key", s.key("k2")])
        let third = try s.sidecar()
        #expect(try #require(third["version"] as? Int) > (try #require(second)))
        #expect(third["format"] as? String == "cenarius-sig-1" && third["signature"] != nil, "one signature: \(third)")
        let other = try s.sync("d", ["--public-key", s.pub("k2")])
        #expect(other.status == 0, "\(other.stderr)")

        // --table-version once; later runs over changed folders still grow.
        try s.dir.write("w/a.txt", "four\n")
        _ = try s.routes(["--sign-key", s.key("k2"), "--table-version", "5"])
        #expect(try s.sidecar()["version"] as? Int == 5)
        try s.dir.write("w/a.txt", "five\n")
        _ = try s.routes(["--sign-key", s.key("k2")])
        #expect(try #require(try s.sidecar()["version"] as? Int) > 5)
        #expect(try s.sync("new", ["--public-key", s.pub("k2")]).status == 0)
    }

    @Test func reSigningInPlaceWithCompressedFormsAndPatchesStillReachesDevices() throws {
        let s = try Setup()
        let trust = ["--public-key", s.pub("k")]
        try s.dir.write("w/app.js", ReleaseBytesEndToEndTests.bundle(1, 20_000))
        _ = try s.routes(["--compress", "--sign-key", s.key("k")])
        #expect(try s.sync("d", trust).status == 0)
        try FileManager.default.copyItem(atPath: s.site, toPath: s.dir.path("old"))
        try s.dir.write("w/app.js", ReleaseBytesEndToEndTests.bundle(1, 20_000) + "// 2")
        _ = try s.routes(["--delta-from", s.dir.path("old"), "--sign-key", s.key("k")])
        let sync = try s.sync("d", trust)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["patchedFiles"] as? Int == 1)
    }

    @Test func everySignKeyOfOneRunSignsTheSameVersion() throws {
        let s = try Setup()
        try s.dir.write("w/a.txt", "one\n")
        _ = try s.routes(["--sign-key", s.key("k"), "--sign-key", s.key("k2")])
        let sidecar = try s.sidecar()
        let signatures = try #require(sidecar["signatures"] as? [[String: Any]])
        #expect(signatures.count == 2)
        let both = ["--public-key", s.pub("k"), "--public-key", s.pub("k2"), "--signatures-required", "2"]
        let sync = try s.sync("d", both)
        #expect(sync.status == 0, "\(sync.stderr)")
    }

    /// Every name under `_cenarius/` is written once now; the compressed table an earlier version
    /// kept at `_cenarius/Routes.json.zst` (and rewrote with every release) is removed by the next
    /// run, plain or `--compress`, so that devices that poll it move on.
    @Test func anyRunRemovesAnEarlierVersionsCompressedTableAndCheckSeesAStaleOne() throws {
        let s = try Setup()
        // Enough files that the table compresses (a table that does not gets no compressed form).
        for n in 0..<40 { try s.dir.write("w/lib/file-\(n).js", "// \(n)") }
        try s.dir.write("w/a.txt", String(repeating: "v1 ", count: 400))
        _ = try s.routes(["--compress", "--sign-key", s.key("k")])
        let form = s.site + "/" + Self.legacyForm
        #expect(!FileManager.default.fileExists(atPath: form), "routes writes no mutable name under _cenarius/")
        try Self.earlierVersionsTableForm(in: s.site, sign: ["--sign-key", s.key("k")])
        let trust = ["--public-key", s.pub("k")]
        #expect(try s.sync("old", trust).status == 0)
        #expect(s.dir.read("old/cache/table-form")?.hasPrefix("-") == false, "the old device polls the compressed table")
        let v1Form = try Data(contentsOf: URL(fileURLWithPath: form))

        for (n, run) in [["--compress", "--sign-key", s.key("k")], ["--sign-key", s.key("k")]].enumerated() {
            try s.dir.write("w/a.txt", String(repeating: "v\(n + 2) ", count: 400))
            let routes = try s.routes(run)
            #expect(!FileManager.default.fileExists(atPath: form), "\(run): no compressed table left behind")
            #expect(routes.stderr.contains("removed"), "\(run): \(routes.stderr)")
            if n == 0 { try Self.earlierVersionsTableForm(in: s.site, headless: false, sign: ["--sign-key", s.key("k")]) }
        }
        #expect(try Binary.run(["routes", s.site, "--check"]).status == 0)
        // The device that polled the compressed table, and a new one, both reach v3.
        for device in ["old", "new"] {
            let sync = try s.sync(device, trust)
            #expect(sync.status == 0, "\(device): \(sync.stderr)")
            let resolved = try Device(device, in: s.dir).run(["resolve", "a.txt", "--offline"])
            #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8).hasPrefix("v3"))
        }

        // A stale compressed table put back (an upload of old files, a mirror): --check sees it,
        // and a new device on the signed remote falls back to the table instead of failing.
        try v1Form.write(to: URL(fileURLWithPath: form))
        let check = try Binary.run(["routes", s.site, "--check"])
        #expect(check.status == 4 && check.stderr.contains("compressed"), "\(check.stderr)")
        let fresh = try s.sync("fresh", trust)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        let resolved = try Device("fresh", in: s.dir).run(["resolve", "a.txt", "--offline"])
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8).hasPrefix("v3"))
        // Not counted as a refused release: only the table itself is the remote's word.
        let state = (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.dir.path("fresh/cache/release.json"))))) as? [String: Any]
        let givenUp = (state?["failedReleases"] as? [String]) ?? []
        #expect(givenUp.isEmpty, "nothing given up: \(String(describing: state))")
    }

    @Test func aCompressedTableThatFailsOrBreaksOffNeverFailsTheSync() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        for n in 0..<40 { try dir.write("w/lib/file-\(n).js", "// \(n)") }
        try dir.write("w/a.txt", String(repeating: "v1 ", count: 400))
        #expect(try Binary.run(["routes", dir.path("w"), "--compress"]).status == 0)
        try Self.earlierVersionsTableForm(in: dir.path("w"))
        try ReleaseBytesEndToEndTests.upload(dir.path("w"), to: origin)
        let form = Self.legacyForm
        for (n, fault) in [Fault.status(500), .truncate, .corrupt, .status(502)].enumerated() {
            origin.inject(fault, on: form, times: 10)
            let sync = try Device(cache: dir.path("c\(n)"), preset: dir.path("p")).run(["sync", "--json", "--remote", origin.url])
            #expect(sync.status == 0, "\(fault): \(sync.stderr)")
            #expect(try sync.json()["outcome"] as? String == "committed", "\(fault)")
            origin.clearFaults()
        }
        // A device that knows the compressed table: its next poll meets a 500 there and still
        // picks up the new release from the table.
        let device = ["sync", "--json", "--remote", origin.url] + Device(cache: dir.path("c0"), preset: dir.path("p")).flags
        try dir.write("w/a.txt", String(repeating: "v2 ", count: 400))
        #expect(try Binary.run(["routes", dir.path("w"), "--compress"]).status == 0)
        try Self.earlierVersionsTableForm(in: dir.path("w"))
        try ReleaseBytesEndToEndTests.upload(dir.path("w"), to: origin)
        #expect(try Binary.run(device).status == 0)
        #expect(dir.read("c0/table-form")?.hasPrefix("-") == false, "the device polls the compressed table")
        try dir.write("w/a.txt", String(repeating: "v3 ", count: 400))
        #expect(try Binary.run(["routes", dir.path("w"), "--compress"]).status == 0)
        try Self.earlierVersionsTableForm(in: dir.path("w"))
        try ReleaseBytesEndToEndTests.upload(dir.path("w"), to: origin)
        origin.inject(.status(500), on: form, times: 10)
        let sync = try Binary.run(device)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["outcome"] as? String == "committed")
    }

    /// A compressed table stale at the origin (an edge, an upload that deletes nothing) while the
    /// signed `Routes.json` moved on: a new device installs the new release from the table, and
    /// its next polls never ask for the refused form again: the release's index says the remote
    /// publishes a head, and the device polls that one name from then on, conditionally.
    @Test func aRefusedCompressedTableIsForgottenAfterTheFallback() async throws {
        let origin = try await TestOrigin()
        let s = try Setup()
        Cleanups.add { await origin.shutdown() }
        for n in 0..<40 { try s.dir.write("w/lib/file-\(n).js", "// \(n)") }
        try s.dir.write("w/a.txt", "v1")
        _ = try s.routes(["--compress", "--sign-key", s.key("k")])
        try Self.earlierVersionsTableForm(in: s.site, headless: false, sign: ["--sign-key", s.key("k")])
        try ReleaseBytesEndToEndTests.upload(s.site, to: origin)
        let form = Self.legacyForm
        let stale = try #require(origin.file(form))
        try s.dir.write("w/a.txt", "v2")
        _ = try s.routes(["--compress", "--sign-key", s.key("k")])
        try ReleaseBytesEndToEndTests.upload(s.site, to: origin)
        origin.put(form, stale)
        let device = ["sync", "--json", "--remote", origin.url] + Device("n", in: s.dir).flags + ["--public-key", s.pub("k")]
        let install = try Binary.run(device)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(try install.json()["outcome"] as? String == "committed")
        origin.resetRequests()
        // The install came from the head (asked first), so the stale form was never adopted.
        for expected in ["not-modified", "not-modified"] {
            let poll = try Binary.run(device)
            #expect(poll.status == 0, "\(poll.stderr)")
            #expect(try poll.json()["outcome"] as? String == expected, "\(poll.stdout)")
        }
        #expect(origin.requests(for: form).isEmpty, "the refused form was asked for again")
        #expect(origin.requests.map(\.path) == ["Routes.head", "Routes.head"])
        #expect(origin.requests.last?.headers["if-none-match"] != nil, "the second poll of the head is conditional")
    }

    @Test func aHaltOnASignedRemoteWithoutAKeyIsRefusedAndChangesNothing() throws {
        let s = try Setup()
        try s.dir.write("w/a.txt", "one\n")
        _ = try s.routes(["--sign-key", s.key("k"), "--release", "r1"])
        let before = try ["Routes.json", "Routes.json.sig", "Routes.json.release"].map { try Data(contentsOf: URL(fileURLWithPath: s.site + "/" + $0)) }
        let reports = (0..<4).map { n in
            #"{"time":"\#(1795000000 + n)","report":"device=\"d\#(n)\", release=\"r0\", state=confirmed, failed=(\"r1\")"}"#
        }
        try s.dir.write("log", reports.joined(separator: "\n") + "\n")
        let halt = try Binary.run(["fleet", s.dir.path("log"), "--halt-above", "10", "--min-devices", "2", "--remote", s.site])
        #expect(halt.status == 64, "\(halt.stdout) \(halt.stderr)")
        #expect(halt.stderr.contains("--sign-key"))
        let after = try ["Routes.json", "Routes.json.sig", "Routes.json.release"].map { try Data(contentsOf: URL(fileURLWithPath: s.site + "/" + $0)) }
        #expect(before == after)
        // A key that cannot be read, or one key of the two that sign the remote: refused too.
        for keys in [["--sign-key", s.dir.path("missing.key")], ["--sign-key", s.key("k2")]] {
            let refused = try Binary.run(["fleet", s.dir.path("log"), "--halt-above", "10", "--min-devices", "2", "--remote", s.site] + keys)
            #expect(refused.status == 64, "\(keys): \(refused.stderr)")
        }
        let unchanged = try ["Routes.json", "Routes.json.sig", "Routes.json.release"].map { try Data(contentsOf: URL(fileURLWithPath: s.site + "/" + $0)) }
        #expect(before == unchanged)
        // With the key it halts, and devices still verify the remote.
        let signed = try Binary.run(["fleet", s.dir.path("log"), "--halt-above", "10", "--min-devices", "2", "--remote", s.site, "--sign-key", s.key("k")])
        #expect(signed.status == 0 && signed.stdout.contains("halted r1"), "\(signed.stdout) \(signed.stderr)")
        let sync = try s.sync("d", ["--public-key", s.pub("k")])
        #expect(sync.status == 0, "\(sync.stderr)")
    }

    @Test func aFailedPackIsFetchedOnceAndEveryByteIsCounted() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        for n in 0..<4 { try dir.write("w/f\(n).js", ReleaseBytesEndToEndTests.bundle(UInt64(n), 30_000)) }
        #expect(try Binary.run(["routes", dir.path("w"), "--compress"]).status == 0)
        try ReleaseBytesEndToEndTests.upload(dir.path("w"), to: origin)
        // The pack a first install takes: the solid one the index names.
        let indexName = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path("w/_cenarius/i")).first)
        let index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("w/_cenarius/i/" + indexName)))) as? [String: Any])
        let pack = "_cenarius/pack/" + (try #require((index["solidPack"] as? [String: Any])?["form"] as? String)) + ".pack"
        let packSize = try #require(origin.file(pack)).count
        var fetchedPast: Int?
        for (n, fault) in [Fault.status(500), .corrupt].enumerated() {
            origin.resetRequests()
            origin.inject(fault, on: pack, times: 10)
            let sync = try Device(cache: dir.path("c\(n)"), preset: dir.path("p")).run(["sync", "--json", "--remote", origin.url])
            #expect(sync.status == 0, "\(fault): \(sync.stderr)")
            #expect(origin.requests(for: pack).count == 1, "\(fault): the pack was asked for \(origin.requests(for: pack).count) times")
            let report = try sync.json()
            #expect(try #require(report["formFallbacks"] as? Int) >= 1, "\(report)")
            let fetched = try #require(report["bytesFetched"] as? Int)
            if let fetchedPast {
                // The same files through their own forms, and the corrupt pack's bytes, which crossed the link too.
                #expect(fetched == fetchedPast + packSize, "fetched \(fetched), past the pack \(fetchedPast), pack \(packSize)")
            }
            fetchedPast = fetched
            origin.clearFaults()
        }
    }

    @Test func forgedDeviceIdsCannotTakeTheFleetCommandsMemory() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        var lines = (0..<500).map { n in #"{"time":"\#(1795000000 + n)","report":"device=\"forged-\#(n)\", release=\"r1\", state=confirmed"}"# }
        lines.append(#"{"time":"1795001000","report":"device=\"forged-3\", release=\"r2\", state=trial"}"#)
        try dir.write("log", lines.joined(separator: "\n") + "\n")
        let run = try Binary.run(["fleet", dir.path("log"), "--max-devices", "100", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try run.json()
        #expect(summary["devices"] as? Int == 100)
        #expect(summary["droppedLines"] as? Int == 400, "\(summary)")
        #expect(run.stderr.contains("400 report lines"), "\(run.stderr)")
        // A device already counted is still followed past the cap.
        let releases = try #require(summary["releases"] as? [[String: Any]])
        #expect(releases.first { $0["release"] as? String == "r2" }?["trial"] as? Int == 1, "\(releases)")
    }
}
