import Foundation
import Testing
import TestOrigin

/// A sync killed (SIGKILL) just before each change it makes to the cache, on the built binary
/// from a `file://` remote (no network): the cache is whole after each kill — `verify` passes, the
/// release served is the old one or the new one, entire — and the next sync completes and leaves
/// nothing behind (the order itself is pinned by `SyncEffectsTests`).
@Suite(.awaitsCleanups) struct CrashBetweenEffectsTests {
    /// What a sync from a remote `routes --compress` wrote changes, in order (SyncEffect), on a
    /// first install and on the next release.
    static let firstInstall = ["attempted", "lastPoll", "headState", "tableFormMarker", "downloads", "generationBuilt", "committed",
                               "checked", "garbageCollected", "lastSync"]
    static let release = ["attempted", "lastPoll", "headState", "downloads", "generationBuilt", "committed", "checked",
                          "garbageCollected", "lastSync"]

    struct Site {
        let dir: Scratch

        init() throws {
            dir = try Scratch.forTest()
        }

        func publish(_ n: Int) throws {
            try dir.write("site/index.html", "<h1>release \(n)</h1>")
            for m in 0..<12 { try dir.write("site/js/part-\(m).js", "// release \(n), part \(m)\n" + String(repeating: "let x\(m) = \(n);\n", count: 200)) }
            #expect(try Binary.run(["routes", dir.path("site"), "--compress"]).status == 0)
        }

        func device(_ name: String) -> [String] {
            ["--remote", "file://" + dir.path("site")] + Device(name, in: dir).flags
        }

        func sync(_ name: String, killBefore effect: String? = nil) throws -> Binary.Run {
            try Binary.run(["sync", "--json"] + device(name), environment: effect.map { ["CENARIUS_TEST_KILL_BEFORE": $0] } ?? [:], killAfter: 60)
        }

        /// The release `name` serves, whole: every file of one release; nil when it serves none.
        func served(_ name: String) throws -> Int? {
            var releases = Set<String>()
            for uri in ["index.html"] + (0..<12).map({ "js/part-\($0).js" }) {
                let resolved = try Binary.run(["resolve", uri, "--offline"] + device(name))
                guard resolved.status == 0 else { return nil }
                let text = try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8)
                releases.insert(String(text.split(separator: "release ").last?.prefix(1) ?? ""))
            }
            #expect(releases.count == 1, "\(name) serves files of one release: \(releases)")
            return releases.first.flatMap { Int($0) }
        }

        /// After the kill and the next sync: no download in flight, no generation half built.
        func expectNothingLeftBehind(_ name: String) throws {
            let tmp = (try? FileManager.default.contentsOfDirectory(atPath: dir.path(name + "/cache/tmp"))) ?? []
            #expect(tmp.isEmpty, "\(name): tmp/ holds \(tmp)")
            let generations = try FileManager.default.contentsOfDirectory(atPath: dir.path(name + "/cache/generations"))
            #expect(!generations.contains { $0.hasSuffix(".building") }, "\(name): \(generations)")
        }
    }

    @Test func aFirstInstallKilledBeforeAnyOfItsChangesIsWholeAndFinishesNextTime() throws {
        let site = try Site()
        try site.publish(1)
        for (n, effect) in Self.firstInstall.enumerated() {
            let name = "first-\(n)"
            let killed = try site.sync(name, killBefore: effect)
            #expect(killed.status == SIGKILL, "killed before \(effect): \(killed.status) \(killed.stderr)")
            if FileManager.default.fileExists(atPath: site.dir.path(name + "/cache")) {
                #expect(try Binary.run(["verify"] + site.device(name)).status == 0, "before \(effect): verify")
            }
            // Before the switch nothing is served; from it on, the release whole.
            let before = Self.firstInstall.firstIndex(of: "committed")!
            #expect(try site.served(name) == (n <= before ? nil : 1), "killed before \(effect)")
            let next = try site.sync(name)
            #expect(next.status == 0, "after a kill before \(effect): \(next.stderr)")
            #expect(try site.served(name) == 1, "after a kill before \(effect)")
            try site.expectNothingLeftBehind(name)
        }
    }

    @Test func aReleaseKilledBeforeAnyOfItsChangesLeavesTheOldOrTheNewWhole() throws {
        let site = try Site()
        try site.publish(1)
        #expect(try site.sync("base").status == 0)
        try site.publish(2)
        let switched = Self.release.firstIndex(of: "committed")!
        for (n, effect) in Self.release.enumerated() {
            let name = "release-\(n)"
            try FileManager.default.copyItem(atPath: site.dir.path("base"), toPath: site.dir.path(name))
            let killed = try site.sync(name, killBefore: effect)
            #expect(killed.status == SIGKILL, "killed before \(effect): \(killed.status) \(killed.stderr)")
            #expect(try Binary.run(["verify"] + site.device(name)).status == 0, "before \(effect): verify")
            #expect(try site.served(name) == (n <= switched ? 1 : 2), "killed before \(effect)")
            let next = try site.sync(name)
            #expect(next.status == 0, "after a kill before \(effect): \(next.stderr)")
            let outcome = try next.json()["outcome"] as? String
            #expect(outcome == (n <= switched ? "committed" : "unchanged") || (n > switched && outcome == "not-modified"), "after \(effect): \(outcome ?? "?")")
            #expect(try site.served(name) == 2, "after a kill before \(effect)")
            try site.expectNothingLeftBehind(name)
        }
    }
}
