import Foundation
import Testing
import TestOrigin

/// Releases on trial (G9) against the real binary: confirmation, rollback by deadline and by
/// health check, the held-back table, survival across SIGKILL, and what every observer sees.
@Suite(.serialized) struct TrialEndToEndTests {
    /// A daemon whose first release (generation 1) is confirmed because nothing precedes it,
    /// and whose second (generation 2) is on trial.
    struct Fixture {
        let origin: TestOrigin
        let dir: Scratch
        let daemon: DaemonProcess
        let http: RawHTTP

        static func start(_ options: [String], origin: TestOrigin? = nil, dir: Scratch? = nil) async throws -> Fixture {
            let origin = try await { () async throws -> TestOrigin in
                if let origin { return origin }
                return try await TestOrigin()
            }()
            let dir = try dir ?? Scratch()
            if origin.file("Routes.json") == nil { origin.publish(["index.html": "v1", "app.js": "one()"]) }
            let daemon = try Device(in: dir).serve(remote: origin.url, options)
            return Fixture(origin: origin, dir: dir, daemon: daemon, http: try daemon.waitUntilServing())
        }

        func publishAndSync(_ files: [String: String]) throws -> [String: Any] {
            origin.publish(files)
            let id = try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String)
            return try waitForReceipt(http, id)
        }

        func status() throws -> [String: Any] { try http.get("/_cenarius/status").json()["cache"] as? [String: Any] ?? [:] }

        func stop() async {
            _ = daemon.terminate()
            await origin.shutdown()
            dir.remove()
        }
    }

    @Test func aConfirmedReleaseStaysAndAnOldPageCannotConfirmANewOne() async throws {
        let f = try await Fixture.start(["--confirm-timeout", "30"])
        let events = try EventStreamClient(port: f.http.port)
        #expect(try f.status()["trial"] as? Bool == false, "nothing precedes the first release: confirmed at once")
        let first = try f.http.get("/index.html")
        #expect(first.headers["x-cenarius-generation"] == "1")
        #expect(first.headers["server-timing"] == #"cenarius-generation;desc="1""#)

        let receipt = try f.publishAndSync(["index.html": "v2", "app.js": "two()"])
        #expect((receipt["release"] as? [String: Any])?["state"] as? String == "trial")
        let committed = try #require(try events.wait(for: "committed", generation: 2))
        #expect(committed.int("generation") == 2 && committed.int("previous") == 1 && committed.bool("trial") == true)
        #expect(try f.status()["trial"] as? Bool == true)
        #expect(try f.http.get("/index.html").headers["x-cenarius-generation"] == "2")

        // The page still showing generation 1 must not confirm generation 2.
        let stale = try f.http.request("POST", "/_cenarius/ready", body: #"{"generation": 1}"#)
        #expect(stale.status == 409)
        #expect(try stale.json()["desc"] as? String == "NOT_FOUND")
        #expect(try f.http.request("POST", "/_cenarius/ready", body: "nonsense").status == 400)

        let ready = try f.http.request("POST", "/_cenarius/ready", body: #"{"generation": 2}"#)
        #expect(ready.status == 200)
        #expect(try ready.json()["status"] as? String == "confirmed")
        #expect(try events.wait(for: "confirmed", generation: 2) != nil)
        #expect(try f.http.request("POST", "/_cenarius/ready", body: #"{"generation": 2}"#).json()["status"] as? String == "already-confirmed")
        let status = try f.status()
        #expect(status["trial"] as? Bool == false && status["confirmedGeneration"] as? Int == 2)
        #expect(try f.http.get("/app.js").text == "two()")
        await f.stop()
    }

    @Test func anUnconfirmedReleaseRollsBackAndStaysHeldBackUntilTheRemoteChanges() async throws {
        // 10 s: generation 3 below must still be on trial when its ready is sent.
        let f = try await Fixture.start(["--confirm-timeout", "10", "--on-switch", "echo \"$CENARIUS_GENERATION $CENARIUS_PREVIOUS $CENARIUS_REASON\" >> switches.log"])
        let events = try EventStreamClient(port: f.http.port)
        let receipt = try f.publishAndSync(["index.html": "v2", "app.js": "broken()"])
        let id = try #require(receipt["id"] as? String)
        let committed = try #require(try events.wait(for: "committed", generation: 2))
        let deadline = try #require(committed.double("deadline"))

        let rolledBack = try #require(try events.wait(for: "rolled-back", timeout: 40))
        // Not before the deadline (the event's time is the daemon's moment of the rollback).
        #expect(try #require(rolledBack.double("time")) >= deadline && rolledBack.double("deadline") == deadline)
        #expect(rolledBack.int("from") == 2 && rolledBack.int("to") == 1 && rolledBack.string("reason") == "timeout")
        #expect(try f.http.get("/app.js").text == "one()")
        #expect(try f.http.get("/app.js").headers["x-cenarius-generation"] == "1")

        // Everywhere a person or a program looks.
        let status = try f.status()
        #expect(status["generation"] as? Int == 1)
        #expect((status["lastRollback"] as? [String: Any])?["reason"] as? String == "timeout")
        #expect((try waitForReceipt(f.http, id)["release"] as? [String: Any])?["reason"] as? String == "timeout")
        #expect(try f.http.get("/metrics").text.contains(#"cenarius_rollbacks_total{reason="timeout"} 1"#))
        let cli = try Device(in: f.dir).run(["status", "--json"])
        #expect((try cli.json()["lastRollback"] as? [String: Any])?["from"] as? Int == 2)

        // The failed table is held back while the remote still publishes it ...
        let again = try waitForReceipt(f.http, try #require(try f.http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect((again["report"] as? [String: Any])?["outcome"] as? String == "held-back")
        #expect(try f.http.get("/app.js").text == "one()")
        // ... and a different table is adopted (on trial again).
        let fixed = try f.publishAndSync(["index.html": "v3", "app.js": "fixed()"])
        #expect((fixed["report"] as? [String: Any])?["generation"] as? Int == 3)
        #expect(try f.http.get("/app.js").text == "fixed()")
        #expect(try f.http.request("POST", "/_cenarius/ready", body: #"{"generation": 3}"#).status == 200)

        let log = try waitForFile(f.daemon.workingDirectory + "/switches.log", lines: 3)
        #expect(log.contains("2 1 committed") && log.contains("1 2 timeout") && log.contains("3 1 committed"))
        let stderr = f.daemon.stderr
        #expect(stderr.contains("rolled back") && stderr.contains("reason=timeout"))
        await f.stop()
    }

    @Test func healthChecksConfirmOrRollBack() async throws {
        // A passing command confirms at once.
        let pass = try await Fixture.start(["--health-cmd", "test \"$CENARIUS_GENERATION\" -ge 1"])
        _ = try pass.publishAndSync(["index.html": "v2", "app.js": "two()"])
        try waitUntil { try pass.status()["confirmedGeneration"] as? Int == 2 }
        await pass.stop()

        // A failing command rolls back without waiting for the deadline.
        let fail = try await Fixture.start(["--health-cmd", "exit 3", "--confirm-timeout", "600"])
        let events = try EventStreamClient(port: fail.http.port)
        _ = try fail.publishAndSync(["index.html": "v2", "app.js": "two()"])
        let rolledBack = try #require(try events.wait(for: "rolled-back", timeout: 30))
        #expect(try #require(rolledBack.double("time")) < rolledBack.double("deadline") ?? 0, "before the deadline")
        #expect(rolledBack.string("reason") == "health")
        #expect(rolledBack.string("detail")?.contains("exit status 3") == true)
        #expect(try fail.http.get("/metrics").text.contains(#"cenarius_rollbacks_total{reason="health"} 1"#))
        await fail.stop()

        // A health URL that answers 500 never confirms: rolled back at the deadline.
        let origin = try await TestOrigin()
        origin.put("healthz", "broken")
        origin.inject(.status(500), on: "healthz")
        let url = try await Fixture.start(["--health-url", origin.url + "/healthz", "--confirm-timeout", "3"])
        let urlEvents = try EventStreamClient(port: url.http.port)
        _ = try url.publishAndSync(["index.html": "v2", "app.js": "two()"])
        let atDeadline = try #require(try urlEvents.wait(for: "rolled-back", timeout: 40))
        #expect(atDeadline.string("reason") == "health")
        // Retried every second until too close to the deadline for another try, not failed at the first 500.
        #expect(try #require(atDeadline.double("time")) >= (atDeadline.double("deadline") ?? .infinity) - 1, "retried until the deadline")
        #expect(try url.http.get("/app.js").text == "one()")
        await url.stop()
        await origin.shutdown()
    }

    @Test func aTrialSurvivesSIGKILL() async throws {
        // Killed before the deadline: the restarted daemon resumes with the time left. 15 s is
        // ample for a kill and a restart; the deadline itself is read, not assumed.
        let origin = try await TestOrigin()
        let dir = try Scratch()
        let f = try await Fixture.start(["--confirm-timeout", "15"], origin: origin, dir: dir)
        _ = try f.publishAndSync(["index.html": "v2", "app.js": "two()"])
        let deadline = try #require(try f.status()["trialDeadline"] as? Double)
        f.daemon.process.signal(SIGKILL)
        f.daemon.process.waitUntilExit()
        let restarted = try await Fixture.start(["--confirm-timeout", "15"], origin: origin, dir: dir)
        let resumed = try restarted.status()
        #expect(resumed["trial"] as? Bool == true, "still on trial after the restart")
        #expect(resumed["trialDeadline"] as? Double == deadline, "the time left, not a new trial")
        #expect(try restarted.http.get("/app.js").text == "two()")
        try waitUntil(timeout: 45) { try restarted.status()["generation"] as? Int == 1 }
        let rollback = try #require(try restarted.status()["lastRollback"] as? [String: Any])
        #expect(rollback["reason"] as? String == "timeout")
        #expect(try #require(rollback["at"] as? Double) >= deadline, "not before the deadline")
        _ = restarted.daemon.terminate()

        // Killed, and down past the deadline: rolled back at start, before serving.
        origin.publish(["index.html": "v3", "app.js": "three()"])
        let third = try await Fixture.start(["--confirm-timeout", "8"], origin: origin, dir: dir)
        try waitUntil { try third.status()["generation"] as? Int == 3 && third.status()["trial"] as? Bool == true }
        let thirdDeadline = try #require(try third.status()["trialDeadline"] as? Double)
        third.daemon.process.signal(SIGKILL)
        third.daemon.process.waitUntilExit()
        let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("cache/release.json")))) as? [String: Any]
        #expect((kept?["trial"] as? [String: Any])?["generation"] as? Int == 3, "killed while on trial")
        // Down until the wall clock is past the recorded deadline (what the restart compares).
        try waitUntil(timeout: 30) { Date().timeIntervalSince1970 > thirdDeadline + 0.1 }
        origin.inject(.status(503), on: "Routes.json")  // keep the restart from syncing anything new
        let late = try await Fixture.start(["--confirm-timeout", "8"], origin: origin, dir: dir)
        #expect(try late.http.get("/app.js").text == "one()", "the first answer after the restart is the confirmed release")
        let lateRollback = try #require(try late.status()["lastRollback"] as? [String: Any])
        #expect(lateRollback["from"] as? Int == 3 && lateRollback["reason"] as? String == "timeout")
        await late.stop()
    }

    @Test func theCommandLineConfirmsAndRollsBackThroughTheRunningDaemon() async throws {
        let f = try await Fixture.start(["--confirm-timeout", "30"])
        let events = try EventStreamClient(port: f.http.port)
        _ = try f.publishAndSync(["index.html": "v2", "app.js": "two()"])
        let common = Device(in: f.dir).flags
        let wrong = try Binary.run(["confirm", "--generation", "1"] + common)
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("generation 2 is on trial"))
        let confirm = try Binary.run(["confirm", "--json"] + common)
        #expect(confirm.status == 0)
        #expect(try confirm.json()["generation"] as? Int == 2)
        #expect(try events.wait(for: "confirmed", generation: 2) != nil)

        _ = try f.publishAndSync(["index.html": "v3", "app.js": "three()"])
        let rollback = try Binary.run(["rollback"] + common)
        #expect(rollback.status == 0)
        let event = try #require(try events.wait(for: "rolled-back"))
        #expect(event.string("reason") == "manual" && event.int("from") == 3 && event.int("to") == 2)
        #expect(try f.http.get("/app.js").text == "two()")
        #expect(try f.http.get("/metrics").text.contains(#"cenarius_rollbacks_total{reason="manual"} 1"#))
        await f.stop()
    }

    @Test func eventsAreReplayedAfterLastEventID() async throws {
        let f = try await Fixture.start([])
        let first = try EventStreamClient(port: f.http.port)
        _ = try f.publishAndSync(["index.html": "v2", "app.js": "two()"])
        let seen = try #require(try first.wait(for: "committed", generation: 2))
        #expect(first.status == 200)
        #expect(first.headers["content-type"] == "text/event-stream")
        f.origin.inject(.status(500), on: "Routes.json")
        _ = try f.publishAndSync(["index.html": "v3", "app.js": "three()"])
        let failed = try #require(try first.wait(for: "sync-failed"))
        #expect(failed.string("desc") == "REMOTE" && failed.string("reason") == "request")

        // A client that was away since `committed` gets what it missed, and nothing twice.
        let back = try EventStreamClient(port: f.http.port, lastEventID: seen.id)
        let missed = try back.next(1)
        #expect(missed.map(\.name) == ["sync-failed"])
        #expect(missed.first?.id == failed.id)
        await f.stop()
    }
}
