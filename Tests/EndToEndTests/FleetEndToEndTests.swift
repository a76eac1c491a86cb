import Foundation
import Testing
import TestOrigin

/// Fleet visibility end to end: real daemons poll a real nginx that logs their Cenarius-Report, and
/// `cenariusd fleet` reads that log, counts the fleet and halts a release that keeps failing.
@Suite(.serialized, .awaitsCleanups) struct FleetEndToEndTests {
    @Test func aReleaseThatRollsBackOnMostDevicesIsHaltedFromTheOriginsLog() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        let site = origin.folder("site")
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        func publish(_ release: String, age: TimeInterval = 0) throws {
            try "<h1>\(release)</h1>".write(toFile: site + "/index.html", atomically: true, encoding: .utf8)
            let routes = try Binary.run(["routes", site, "--release", release])
            #expect(routes.status == 0, "\(routes.stderr)")
            // nginx's ETag is mtime and size: two tables of one size written in one second would look the same.
            for file in ["index.html", "Routes.json", "Routes.json.release"] {
                try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: site + "/" + file)
            }
        }
        try publish("2026.11-a", age: 3600)

        // Four devices; on three of them the health check fails for anything after their first generation.
        let daemons = try (1...4).map { n in
            try DaemonProcess(["--remote", origin.url(.good), "--cacert", origin.caFile, "--preset", dir.path("preset"),
                               "--interval", "3600", "--device-id", "kiosk-\(n)", "--native-version", "2.3.0",
                               "--health-cmd", n < 4 ? #"test "$CENARIUS_GENERATION" -lt 2"# : "true"],
                              cache: dir.path("cache\(n)"))
        }
        let clients = try daemons.map { try $0.waitUntilServing() }
        for http in clients { try waitUntil { try http.get("/_cenarius/status").json()["cache"].flatMap { ($0 as? [String: Any])?["confirmedGeneration"] as? Int } == 1 } }

        try publish("2026.11-b")
        for http in clients {
            let receipt = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
            #expect(receipt["status"] as? String == "SUCCEED")
        }
        for (n, http) in clients.enumerated() where n < 3 {
            try waitUntil { ((try http.get("/_cenarius/status").json()["cache"] as? [String: Any])?["lastRollback"] as? [String: Any])?["reason"] as? String == "health" }
        }
        // The next poll of each says what happened.
        for http in clients {
            _ = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        }

        let log = origin.root + "/logs/fleet.log"
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.allSatisfy { !$0.contains("kiosk-") }, "the device id itself is never sent")
        #expect(lines.contains { $0.contains(#"failed=(\"2026.11-b\")"#) && $0.contains(#"native=\"2.3.0\""#) }, "\(lines.suffix(4))")

        let counted = try Binary.run(["fleet", log, "--json"])
        #expect(counted.status == 0, "\(counted.stderr)")
        let releases = try #require(try counted.json()["releases"] as? [[String: Any]])
        let b = try #require(releases.first { $0["release"] as? String == "2026.11-b" })
        let a = try #require(releases.first { $0["release"] as? String == "2026.11-a" })
        #expect(b["devices"] as? Int == 1 && b["confirmed"] as? Int == 1 && b["failed"] as? Int == 3)
        #expect(a["devices"] as? Int == 3 && a["confirmed"] as? Int == 3 && a["failed"] as? Int == 0)
        #expect(try counted.json()["devices"] as? Int == 4)
        // Each device by its latest report: why's code as of its poll before (docs/why.md).
        let whys = try #require(try counted.json()["why"] as? [String: Int], "\(counted.stdout)")
        #expect(whys == ["held-back": 3, "current": 1], "\(whys)")
        let notOn = try #require(try counted.json()["notOnNewest"] as? [String: Any])
        #expect(notOn["release"] as? String == "2026.11-b" && notOn["devices"] as? Int == 3 && notOn["why"] as? [String: Int] == ["held-back": 3], "\(notOn)")
        let text = try Binary.run(["fleet", log])
        #expect(text.stdout.contains("2026.11-b") && text.stdout.contains("rolled back/refused"), "\(text.stdout)")
        #expect(text.stdout.contains("3 devices not on 2026.11-b, the newest: held-back 3"), "\(text.stdout)")

        // Below its sample nothing is halted; above it, the manifest says halted and exit is still 0.
        let small = try Binary.run(["fleet", log, "--halt-above", "50", "--min-devices", "10", "--remote", site])
        #expect(small.status == 0 && small.stdout.contains("not halted"), "\(small.stdout)\(small.stderr)")
        #expect(try !String(contentsOfFile: site + "/Routes.json.release", encoding: .utf8).contains(#""halted": true"#))
        let halt = try Binary.run(["fleet", log, "--halt-above", "50", "--min-devices", "3", "--remote", site, "--json"])
        #expect(halt.status == 0, "\(halt.stderr)")
        let verdict = try #require(try halt.json()["halt"] as? [String: Any])
        #expect(verdict["halted"] as? Bool == true && verdict["tried"] as? Int == 4 && verdict["failed"] as? Int == 3)
        let manifest = try String(contentsOfFile: site + "/Routes.json.release", encoding: .utf8)
        #expect(manifest.contains(#""halted": true"#) && manifest.contains(#""release": "2026.11-b""#), "\(manifest)")

        // With --no-report a poll carries nothing.
        let before = lines.count
        let quiet = try Device(cache: dir.path("quiet"), preset: dir.path("preset"))
            .run(["sync", "--no-report", "--remote", origin.url(.good), "--cacert", origin.caFile])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        let after = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").dropFirst(before)
        #expect(after.contains { $0.contains(#""report":"""#) } && !after.contains { $0.contains("device=") }, "\(after)")
        for daemon in daemons { _ = daemon.terminate() }
    }
}

@Suite(.awaitsCleanups) struct FleetHaltSigningTests {
    /// Halting a signed remote signs it anew: devices with the public key accept the halted manifest, and
    /// the expiry the publisher chose is kept.
    @Test func aHaltOnASignedRemoteKeepsItVerifiableAndKeepsItsExpiry() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("site/index.html", "<h1>r1</h1>")
        try dir.keygen("release")
        let routes = try Binary.run(["routes", dir.path("site"), "--release", "r1", "--sign-key", dir.path("release.key"), "--expires", "7d"])
        #expect(routes.status == 0, "\(routes.stderr)")
        var log = ""
        for n in 0..<4 {
            let failed = n < 3 ? #", failed=(\"r1\")"# : ""
            let release = n < 3 ? "r0" : "r1"
            log += #"{"time":"1764000000.5","report":"device=\"d\#(n)\", release=\"\#(release)\", state=confirmed\#(failed)"}"# + "\n"
        }
        try dir.write("cenarius.log", log)
        let halt = try Binary.run(["fleet", dir.path("cenarius.log"), "--halt-above", "50", "--min-devices", "4",
                                   "--remote", dir.path("site"), "--sign-key", dir.path("release.key")])
        #expect(halt.status == 0 && halt.stdout.contains("halted r1") && halt.stdout.contains("re-signed"), "\(halt.stdout)\(halt.stderr)")
        #expect(dir.read("site/Routes.json.release")?.contains(#""halted": true"#) == true)
        #expect(dir.read("site/Routes.json.sig")?.contains("expires") == true)

        let sync = try Device(in: dir).run(["sync", "--json", "--remote", "file://" + dir.path("site"), "--public-key", dir.path("release.pub")])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["outcome"] as? String == "deferred", "\(sync.stdout)")
    }

    /// A folder whose head names no index is halted in place by the release writer: from the
    /// folder's exact table (a file changed since `routes` does not change it), with a release record.
    @Test func aHaltInPlaceKeepsTheExactTableAndIsRecorded() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("site/index.html", "<h1>r1</h1>")
        #expect(try Binary.run(["routes", dir.path("site"), "--release", "r1"]).status == 0)
        let table = dir.read("site/Routes.json")
        try dir.write("site/index.html", "<h1>edited after routes</h1>")
        let log = (0..<4).map { #"{"time":"1764000000.5","report":"device=\"d\#($0)\", release=\"r0\", state=confirmed, failed=(\"r1\")"}"# }
        try dir.write("cenarius.log", log.joined(separator: "\n") + "\n")
        let halt = try Binary.run(["fleet", dir.path("cenarius.log"), "--halt-above", "50", "--min-devices", "3", "--remote", dir.path("site")])
        #expect(halt.status == 0 && halt.stdout.contains("halted r1") && halt.stdout.contains("Routes.json.release"), "\(halt.stdout)\(halt.stderr)")
        #expect(dir.read("site/Routes.json") == table, "the folder's table, not one rebuilt from its files")
        #expect(dir.read("site/Routes.head")?.contains(#"\"halted\": true"#) == true)
        let releases = try Binary.run(["releases", dir.path("site"), "--json"])
        #expect(releases.status == 0 && releases.stdout.contains("fleet --halt-above"), "\(releases.stdout)\(releases.stderr)")
        let again = try Binary.run(["fleet", dir.path("cenarius.log"), "--halt-above", "50", "--min-devices", "3", "--remote", dir.path("site")])
        #expect(again.status == 0 && again.stdout.contains("r1 was already halted"), "\(again.stdout)\(again.stderr)")
    }

    /// The in-place halt holds the folder's publish lock as every release writer does: begun while a
    /// publish holds it, the halt waits, reads the folder again, and leaves that newer release alone.
    @Test func aHaltInPlaceWaitsForAPublishAndLeavesItsReleaseAlone() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("site/index.html", "<h1>r1</h1>")
        #expect(try Binary.run(["routes", dir.path("site"), "--release", "r1"]).status == 0)
        try dir.write("build/index.html", "<h1>r2</h1>")
        let log = (0..<4).map { #"{"time":"1764000000.5","report":"device=\"d\#($0)\", release=\"r0\", state=confirmed, failed=(\"r1\")"}"# }
        try dir.write("cenarius.log", log.joined(separator: "\n") + "\n")
        let hold = dir.path("hold")
        _ = FileManager.default.createFile(atPath: hold, contents: nil)
        let publish = PublishRaceTests.Background(["publish", dir.path("build"), "--to", dir.path("site"), "--release", "r2"],
                                                  environment: ["CENARIUS_TEST_PAUSE_BEFORE": "locked", "CENARIUS_TEST_PAUSE_FILE": hold])
        try waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: hold + ".reached") || publish.finished != nil }
        #expect(publish.finished == nil, "the publish never took the lock: \(publish.finished?.stderr ?? "")")
        let halt = PublishRaceTests.Background(["fleet", dir.path("cenarius.log"), "--halt-above", "50", "--min-devices", "3",
                                                "--remote", dir.path("site")], environment: [:])
        Thread.sleep(forTimeInterval: 1.5)
        #expect(halt.finished == nil, "the halt did not wait for the publish's lock: \(halt.finished?.stdout ?? "")")
        try FileManager.default.removeItem(atPath: hold)
        let published = try publish.wait()
        #expect(published.status == 0, "\(published.stderr)")
        let halted = try halt.wait()
        #expect(halted.status == 0 && halted.stdout.contains("not halted"), "\(halted.stdout)\(halted.stderr)")
        #expect(dir.read("site/Routes.head")?.contains(#"\"halted\": true"#) == false, "the publish's release is not halted")
        #expect(dir.read("site/index.html") == "<h1>r2</h1>")
    }

    /// A device that polls the head learns of a halt from it: the halt writes a new head over the
    /// same table, with the halted manifest, signed again.
    @Test func aHaltReachesDevicesThatPollTheHead() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.keygen("release")
        for n in 0..<40 { try dir.write("site/static/file-\(n).txt", "unchanged \(n)") }
        try dir.write("site/index.html", "<h1>r0</h1>")
        let sign = ["--sign-key", dir.path("release.key")]
        #expect(try Binary.run(["routes", dir.path("site"), "--compress", "--release", "r0"] + sign).status == 0)
        let device = ["sync", "--json", "--remote", "file://" + dir.path("site"), "--public-key", dir.path("release.pub")] + Device(in: dir).flags
        #expect(try Binary.run(device).json()["outcome"] as? String == "committed")
        #expect(FileManager.default.fileExists(atPath: dir.path("cache/head.json")), "the device polls the head")

        try dir.write("site/index.html", "<h1>r1</h1>")
        #expect(try Binary.run(["routes", dir.path("site"), "--compress", "--release", "r1"] + sign).status == 0)
        var log = ""
        for n in 0..<4 {
            log += #"{"time":"1764000000.5","report":"device=\"d\#(n)\", release=\"r0\", state=confirmed\#(n < 3 ? #", failed=(\"r1\")"# : "")"}"# + "\n"
        }
        try dir.write("cenarius.log", log)
        let halt = try Binary.run(["fleet", dir.path("cenarius.log"), "--halt-above", "50", "--min-devices", "3", "--remote", dir.path("site")] + sign)
        #expect(halt.status == 0 && halt.stdout.contains("halted r1"), "\(halt.stdout)\(halt.stderr)")
        #expect(dir.read("site/Routes.head")?.contains(#"\"halted\": true"#) == true, "\(dir.read("site/Routes.head") ?? "")")
        #expect(try Binary.run(["routes", dir.path("site"), "--check"]).status == 0)
        // The one halt path: `halt`'s republish, so the halt is a release with its record, and a
        // second run of the same verdict uploads nothing.
        let releases = try Binary.run(["releases", dir.path("site"), "--json"])
        #expect(releases.stdout.contains("fleet --halt-above"), "\(releases.stdout)\(releases.stderr)")
        let again = try Binary.run(["fleet", dir.path("cenarius.log"), "--halt-above", "50", "--min-devices", "3", "--remote", dir.path("site")] + sign)
        #expect(again.status == 0 && again.stdout.contains("r1 was already halted"), "\(again.stdout)\(again.stderr)")

        let sync = try Binary.run(device)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["outcome"] as? String == "deferred", "\(sync.stdout)")
    }
}

/// `fleet` on logs of some size, as a user runs it: the same counts on one thread and on several,
/// the cap and `--since` as the output says them.
@Suite(.awaitsCleanups) struct FleetReadingEndToEndTests {
    @Test func oneThreadAndSeveralPrintTheSameCountsAndTheCapIsSaid() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        var log = ""
        // 300 devices polling, then 3,000 forged ids, then the devices again with a release most rolled back.
        for n in 0..<3000 {
            log += #"{"time":"\#(1_764_000_000 + n).250","report":"device=\"real-\#(n % 300)\", release=\"r1\", state=confirmed, native=\"2.3.0\", why=current"}"# + "\n"
        }
        for n in 0..<3000 {
            log += #"{"time":"\#(1_764_010_000 + n).000","report":"device=\"\#(String(format: "%016x", n * 7919))\", release=\"r1\", state=confirmed"}"# + "\n"
        }
        for n in 0..<300 {
            let failed = n < 200 ? #", failed=(\"r2\")"# : ""
            log += #"{"time":"\#(1_764_020_000 + n).500","report":"device=\"real-\#(n)\", release=\"\#(n < 200 ? "r1" : "r2")\", state=confirmed\#(failed), why=\#(n < 200 ? "held-back" : "current")"}"# + "\n"
        }
        try dir.write("cenarius.log", log)
        var outputs: [String] = []
        for threads in ["1", "2", "4"] {
            let run = try Binary.run(["fleet", dir.path("cenarius.log"), "--json", "--threads", threads, "--max-devices", "1000"])
            #expect(run.status == 0, "\(run.stderr)")
            outputs.append(run.stdout)
            let json = try run.json()
            #expect(json["devices"] as? Int == 1000 && json["droppedLines"] as? Int == 2300, "\(run.stdout)")
            #expect(run.stderr.contains("2300 report lines of devices beyond the first 1000 (--max-devices) were not counted"), "\(run.stderr)")
            let releases = try #require(json["releases"] as? [[String: Any]])
            let r2 = try #require(releases.first { $0["release"] as? String == "r2" })
            #expect(r2["devices"] as? Int == 100 && r2["failed"] as? Int == 200, "\(releases)")
        }
        #expect(Set(outputs).count == 1, "\(outputs)")

        // --since: only the last 300 lines are recent enough (their times are from 2025-11-24, the
        // others' from a little earlier), so every device counted is a real one.
        let recent = try Binary.run(["fleet", dir.path("cenarius.log"), "--json", "--since", "\(Int(Date().timeIntervalSince1970) - 1_764_019_990)s"])
        #expect(recent.status == 0, "\(recent.stderr)")
        #expect(try recent.json()["devices"] as? Int == 300 && recent.json()["droppedLines"] as? Int == 0, "\(recent.stdout)")
    }

    /// A stick's reports (docs/bundles.md) are counted with the origin's log, each device once by
    /// its latest report, and the bytes from peers and from the origin are summed from both.
    @Test func aSticksReportsCountWithTheLogAndPeerBytesAreSummed() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        func line(_ time: String, _ report: String, extra: String = "") -> String {
            #"{"time":"\#(time)","report":"\#(report.replacingOccurrences(of: "\"", with: "\\\""))"\#(extra)}"# + "\n"
        }
        try dir.write("cenarius.log", line("1764000000.250", #"device="a", release="r1", state=confirmed, peer=10, origin=90"#)
            + line("1764000001.250", #"device="b", release="r2", state=trial, why=trial, peer=4000, origin=1000"#)
            + line("1764000002.250", #"device="c", release="r2", state=confirmed"#))
        try FileManager.default.createDirectory(atPath: dir.path("stick/cenarius-reports"), withIntermediateDirectories: true)
        let bundle = #","bundle":"app.cenarius.tar","outcome":"committed""#
        // a's import is later than its poll: a counts once, on r2, with its import's bytes (not its poll's 10 and 90).
        try dir.write("stick/cenarius-reports/a-1764000100.json", line("1764000100.539", #"device="a", release="r2", state=confirmed, why=current, peer=3000, origin=0"#, extra: bundle))
        try dir.write("stick/cenarius-reports/d-1764000101.json", line("1764000101.000", #"device="d", release="r2", state=confirmed, why=current"#, extra: bundle))
        try dir.write("stick/cenarius-reports/.e-1.json", line("1764000102.000", #"device="e", release="r2", state=confirmed"#))
        try dir.write("elsewhere.json", line("1764000103.000", #"device="f", release="r2", state=confirmed"#))
        try FileManager.default.createSymbolicLink(atPath: dir.path("stick/cenarius-reports/f-1.json"), withDestinationPath: dir.path("elsewhere.json"))

        for stick in [dir.path("stick"), dir.path("stick/cenarius-reports")] {
            let run = try Binary.run(["fleet", dir.path("cenarius.log"), stick, "--json"])
            #expect(run.status == 0, "\(run.stderr)")
            let json = try run.json()
            #expect(json["devices"] as? Int == 4 && json["lines"] as? Int == 5, "\(run.stdout)")
            #expect(json["peerBytes"] as? Int == 7000 && json["originBytes"] as? Int == 1000, "\(run.stdout)")
            let releases = try #require(json["releases"] as? [[String: Any]])
            let r2 = try #require(releases.first { $0["release"] as? String == "r2" })
            #expect(releases.count == 1 && r2["devices"] as? Int == 4 && r2["peerBytes"] as? Int == 7000 && r2["originBytes"] as? Int == 1000, "\(releases)")
        }
        let text = try Binary.run(["fleet", dir.path("cenarius.log"), dir.path("stick")])
        #expect(text.status == 0 && text.stdout.contains("4 devices in 5 lines"), "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("in all: 6.8 KiB from peers, 1000 B from the origin (87% of the bytes kept off the uplink)"), "\(text.stdout)")
        // Without peer bytes in any report, the output says nothing of them.
        try dir.write("plain.log", line("1764000002.250", #"device="c", release="r2", state=confirmed"#))
        let plain = try Binary.run(["fleet", dir.path("plain.log")])
        #expect(plain.status == 0 && !plain.stdout.contains("from peers"), "\(plain.stdout)")
    }
}

/// In PublishTests' serialized suite, as every test of the shared object store is.
extension PublishTests {
    /// `fleet --halt-above` on a store remote takes `halt`'s path: the release republished halted
    /// under the publish lock, recorded, seen by devices; the same verdict again changes nothing.
    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func theFleetHaltsARolloutOnTheObjectStore() async throws {
        let (_, _, publisher) = try await Publisher.onObjectStore("halt")
        try publisher.publish(1)
        try publisher.publish(2)
        var log = ""
        for n in 0..<4 {
            log += #"{"time":"1764000000.5","report":"device=\"d\#(n)\", release=\"r1\", state=confirmed\#(n < 3 ? #", failed=(\"r2\")"# : "")"}"# + "\n"
        }
        try publisher.dir.write("fleet.log", log)
        let halt = ["fleet", publisher.dir.path("fleet.log"), "--halt-above", "50", "--min-devices", "3", "--remote", publisher.remote,
                    "--sign-key", publisher.dir.path("k1.key"), "--json"] + publisher.remoteFlags
        let first = try publisher.run(halt)
        #expect(first.status == 0, "\(first.stderr)")
        let verdict = try #require(try first.json()["halt"] as? [String: Any])
        #expect(verdict["halted"] as? Bool == true && verdict["release"] as? String == "r2", "\(first.stdout)")
        #expect((verdict["reason"] as? String)?.contains("republished it halted as version") == true, "\(first.stdout)")
        #expect(try publisher.releases().first?["origin"] as? String == "fleet --halt-above")
        #expect(try publisher.sync("a device after the halt")["outcome"] as? String == "deferred")

        let again = try publisher.run(halt)
        let reason = (try again.json()["halt"] as? [String: Any])?["reason"] as? String
        #expect(again.status == 0 && reason == "r2 was already halted: 100.0% of 3 devices gave it up", "\(again.stdout)\(again.stderr)")
        #expect(try publisher.releases().count == 3, "the second verdict publishes nothing")
    }
}
