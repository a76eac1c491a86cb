import Foundation
import RouteSync
import Testing
import TestOrigin

/// Staged adoption, halts, the compatibility gate and holds (G10) against the real binary, with
/// the rollout clock moved by the test hook `CENARIUS_CLOCK_OFFSET`.
@Suite(.serialized, .awaitsCleanups) struct RolloutEndToEndTests {
    struct Fixture {
        let origin: TestOrigin
        let dir: Scratch
        let id = "kiosk-17"
        var common: [String] {
            ["--remote", origin.url] + Device(in: dir).flags + ["--device-id", id]
        }

        /// `cenariusd sync --json` as the rollout's clock reads `now`.
        func sync(at now: Double? = nil, _ extra: [String] = []) throws -> Binary.Run {
            let offset = now.map { String($0 - Date().timeIntervalSince1970) } ?? "0"
            return try Binary.run(["sync", "--json"] + common + extra, environment: ["CENARIUS_CLOCK_OFFSET": offset])
        }

        func app() throws -> String {
            let path = try Binary.run(["resolve", "app.js", "--offline"] + common).stdout.trimmingCharacters(in: .newlines)
            return (try? String(contentsOfFile: path, encoding: .utf8)) ?? "?"
        }

        func status() throws -> [String: Any] {
            try Binary.run(["status", "--json"] + common).json()
        }

        func manifest(_ json: String) { origin.put("Routes.json.release", json) }
    }

    func device() async throws -> Fixture {
        let device = Fixture(origin: try await TestOrigin(), dir: try Scratch())
        device.origin.publish(["index.html": "v1", "app.js": "one()"])
        #expect(try device.sync().status == 0)
        return device
    }

    @Test func aDeviceAdoptsAtItsOwnMomentAndAsksConditionallyMeanwhile() async throws {
        let d = try await device()
        Cleanups.add { await d.origin.shutdown(); d.dir.remove() }
        let start = Date().timeIntervalSince1970.rounded() + 100
        d.origin.publish(["index.html": "v2", "app.js": "two()"])
        d.manifest(#"{"release": "r2", "rollout": {"start": \#(Int(start)), "duration": 1000}}"#)
        let place = RolloutGate.place(deviceID: d.id, release: "r2")
        let moment = start + place * 1000

        // Well before the moment: the clock read in the process runs on past the offset while it
        // starts, so a second or two before could already be after on a loaded machine.
        let early = try d.sync(at: moment - 120)
        #expect(early.status == 0)
        let report = try early.json()
        #expect(report["outcome"] as? String == "deferred")
        let deferred = try #require(report["deferred"] as? [String: Any])
        #expect(deferred["reason"] as? String == "time")
        #expect(abs((deferred["at"] as? Double ?? 0) - moment) < 0.01)
        #expect(try d.app() == "one()")
        let status = try #require(try d.status()["deferred"] as? [String: Any])
        #expect(status["waitsFor"] as? String == "time" && status["release"] as? String == "r2")
        #expect(abs((status["place"] as? Double ?? -1) - place) < 1e-9)

        // While it waits, each poll is a 304 for the table and for the manifest: no file bytes.
        d.origin.resetRequests()
        #expect(try d.sync(at: moment - 60).json()["outcome"] as? String == "deferred")
        let table = try #require(d.origin.requests(for: "Routes.json").last)
        #expect(table.headers["if-none-match"] != nil)
        #expect(d.origin.requests(for: "Routes.json.release").last?.headers["if-none-match"] != nil)
        #expect(d.origin.requests(for: "app.js").isEmpty)

        let adopted = try d.sync(at: moment + 1).json()
        #expect(adopted["outcome"] as? String == "committed")
        #expect(try d.app() == "two()")
        #expect(try d.status()["deferred"] == nil)
    }

    @Test func theDaemonSwitchesAtTheDevicesMomentWithoutWaitingForItsNextPoll() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1", "app.js": "one()"])
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--device-id", "kiosk-9"])
        let http = try daemon.waitUntilServing()
        let events = try EventStreamClient(port: http.port)
        // A rollout that reaches this device 8 s from now: time for the sync below to be deferred
        // first, even on a loaded machine.
        let place = RolloutGate.place(deviceID: "kiosk-9", release: "r2")
        let start = Date().timeIntervalSince1970 + 8 - place * 10
        origin.publish(["index.html": "v2", "app.js": "two()"])
        origin.put("Routes.json.release", #"{"release": "r2", "rollout": {"start": \#(start), "duration": 10}}"#)
        let receipt = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect((receipt["report"] as? [String: Any])?["outcome"] as? String == "deferred")
        let deferred = try #require(try events.wait(for: "deferred"))
        #expect(deferred.string("waitsFor") == "time" && deferred.string("release") == "r2" && deferred.string("why") == "deferred-moment")
        #expect(abs((deferred.double("at") ?? 0) - (start + place * 10)) < 0.01)
        #expect(try http.get("/app.js").text == "one()")
        let committed = try #require(try events.wait(for: "committed", generation: 2, timeout: 40))
        #expect(committed.string("reason") == "rollout")
        #expect(try #require(committed.double("time")) >= start + place * 10, "not before the device's moment")
        #expect(try http.get("/app.js").text == "two()")
        _ = daemon.terminate()
    }

    @Test func aHaltStopsTheRestAndAnUnhaltedManifestResumes() async throws {
        let d = try await device()
        Cleanups.add { await d.origin.shutdown(); d.dir.remove() }
        d.origin.publish(["index.html": "v2", "app.js": "two()"])
        d.manifest(#"{"release": "r2", "rollout": {"start": 0, "duration": 60, "halted": true}}"#)
        let halted = try d.sync().json()
        #expect((halted["deferred"] as? [String: Any])?["reason"] as? String == "halted")
        #expect(try d.app() == "one()")
        d.manifest(#"{"release": "r2", "rollout": {"start": 0, "duration": 60, "halted": false}}"#)
        #expect(try d.sync().json()["outcome"] as? String == "committed")
        #expect(try d.app() == "two()")
    }

    @Test func anIncompatibleHostNeverAdoptsAndSaysWhy() async throws {
        let d = try await device()
        Cleanups.add { await d.origin.shutdown(); d.dir.remove() }
        d.origin.publish(["index.html": "v2", "app.js": "two()"])
        d.manifest(#"{"release": "r2", "requires": {"native": "2.10.0"}}"#)
        let old = try d.sync(at: Date().timeIntervalSince1970 + 365 * 86400, ["--native-version", "2.9.1"]).json()
        #expect((old["deferred"] as? [String: Any])?["detail"] as? String == "requires native 2.10.0, have 2.9.1")
        #expect(try d.app() == "one()")
        let status = try #require(try Binary.run(["status", "--json", "--native-version", "2.9.1"] + d.common).json()["deferred"] as? [String: Any])
        #expect(status["reason"] as? String == "requires native 2.10.0, have 2.9.1")
        #expect(status["waitsFor"] as? String == "compatibility")
        let text = try Binary.run(["status"] + d.common).stdout
        #expect(text.contains("waits for compatibility: requires native 2.10.0, have 2.9.1"))
        #expect(try d.sync(at: nil, ["--native-version", "2.10"]).json()["outcome"] as? String == "committed")
        #expect(try d.app() == "two()")
        // A bad version is a usage error, not a guess.
        #expect(try d.sync(at: nil, ["--native-version", "2.10-beta"]).status == 64)
    }

    @Test func aTamperedSignedManifestIsRefusedAndNothingIsAdopted() async throws {
        let publisher = try await Publisher.make()
        let (origin, dir) = (publisher.origin, publisher.dir)
        try publisher.dir.keygen("release")
        func publish(_ app: String, _ extra: [String], from site: String = "site") throws {
            try publisher.publish(app, build: site, ["--sign-key", "@release.key"] + extra)
        }
        let common = ["--remote", origin.url] + Device(in: dir).flags + ["--public-key", dir.path("release.pub"), "--device-id", "k1"]
        try publish("one()", [])
        #expect(try Binary.run(["sync"] + common).status == 0)

        // Two publishers that share no files (two folders, as two CI runners), signing within one
        // second, still give growing versions (both tables accepted: SigningTests).
        try publish("two()", ["--release", "r2"])
        let first = try TableSignature.parse(Array(try #require(dir.read("site/Routes.json.sig")).utf8), source: "sig").version
        try publish("three()", ["--release", "r3"], from: "site-b")
        let second = try TableSignature.parse(Array(try #require(dir.read("site-b/Routes.json.sig")).utf8), source: "sig").version
        #expect(second > first)

        // Halting by editing the manifest without the key: refused, exit 4, nothing adopted.
        origin.put("Routes.json.release", #"{"release": "r3", "rollout": {"start": 0, "duration": 60, "halted": true}}"#)
        let tampered = try Binary.run(["sync"] + common)
        #expect(tampered.status == 4)
        #expect(tampered.stderr.contains("does not match its signature"))
        // Dropping it is refused as well.
        origin.remove("Routes.json.release")
        #expect(try Binary.run(["sync"] + common).status == 4)
        try publish("three()", ["--release", "r3"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        let path = try Binary.run(["resolve", "app.js", "--offline"] + common).stdout.trimmingCharacters(in: .newlines)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "three()")
    }

    @Test func holdsDeferSwitchesUntilDeletedOrExpiredAndSurviveSIGKILL() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1", "app.js": "one()"])
        let args = ["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"]
        var daemon = try DaemonProcess(args, cache: dir.path("cache"))
        var http = try daemon.waitUntilServing()
        // From the first event on (Last-Event-ID 0), so that `held` is seen however early it came.
        let events = try EventStreamClient(port: http.port, lastEventID: "0")

        let created = try http.request("POST", "/_cenarius/hold", body: #"{"ttl": 60, "reason": "payment in progress"}"#)
        #expect(created.status == 201)
        let id = try #require(try created.json()["id"] as? String)
        let heldEvent = try events.wait(for: "held")
        #expect(heldEvent?.string("reason") == "payment in progress" && heldEvent?.string("why") == "held")
        origin.publish(["index.html": "v2", "app.js": "two()"])
        let held = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect((held["report"] as? [String: Any])?["outcome"] as? String == "held")
        #expect((held["report"] as? [String: Any])?["downloadedFiles"] as? Int == 2, "downloads go on while held")
        #expect(try http.get("/app.js").text == "one()")

        // The hold survives kill -9.
        daemon.process.signal(SIGKILL)
        daemon.process.waitUntilExit()
        daemon = try DaemonProcess(args, cache: dir.path("cache"))
        http = try daemon.waitUntilServing()
        let holds = try http.get("/_cenarius/status").json()["cache"] as? [String: Any]
        #expect((holds?["holds"] as? [[String: Any]])?.first?["id"] as? String == id)
        #expect(try http.get("/app.js").text == "one()")

        // Releasing the last hold switches at once.
        let restarted = try EventStreamClient(port: http.port, lastEventID: "0")
        #expect(try http.request("DELETE", "/_cenarius/hold/\(id)").status == 200)
        #expect(try http.request("DELETE", "/_cenarius/hold/\(id)").status == 404)
        #expect(try restarted.wait(for: "released")?.int("holds") == 0)
        try waitUntil { try http.get("/app.js").text == "two()" }

        // A hold that expires releases by itself (10 s: the sync below is held first).
        let short = try http.request("POST", "/_cenarius/hold", body: #"{"ttl": 10}"#)
        #expect(short.status == 201)
        let expires = try #require(try short.json()["expires"] as? Double)
        origin.publish(["index.html": "v3", "app.js": "three()"])
        let second = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect((second["report"] as? [String: Any])?["outcome"] as? String == "held")
        #expect(try http.get("/app.js").text == "two()")
        let expired = try #require(try restarted.wait(for: "released", timeout: 40))
        #expect(expired.string("why") == "expired")
        #expect(try #require(expired.double("time")) >= expires, "not before it expires")
        let switched = try #require(try restarted.wait(for: "committed", generation: 3))
        #expect(try #require(switched.double("time")) >= expires)
        #expect(try http.get("/app.js").text == "three()")
        #expect(try http.request("POST", "/_cenarius/hold", body: #"{"ttl": -1}"#).status == 400)
        _ = daemon.terminate()
    }
}
