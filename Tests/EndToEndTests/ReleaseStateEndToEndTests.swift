import Foundation
import Testing
import Synchronization
import TestOrigin

#if canImport(Glibc)
import Glibc
#endif

/// The release state has one owner (the daemon's ReleaseMachine): the findings of issue 30,
/// black box against the built binary — a manual rollback never resurrects a failed release,
/// racing confirm/rollback/ready end consistent, a commit by a `sync` process starts its trial,
/// and a confirmation while a rollback waits for the writer lock cannot be undone by it.
@Suite(.serialized) struct ReleaseStateEndToEndTests {
    typealias Fixture = TrialEndToEndTests.Fixture

    func common(_ f: Fixture) -> [String] { Device(in: f.dir).flags }

    @Test func aManualRollbackGoesToTheLastConfirmedReleaseNotToOneThatFailed() async throws {
        // 10 s: C (3) below must still be on trial when the operator's `rollback` process asks.
        let f = try await Fixture.start(["--confirm-timeout", "10"])
        let events = try EventStreamClient(port: f.http.port)
        // B (2) is never confirmed and is rolled back at its deadline.
        _ = try f.publishAndSync(["index.html": "B", "app.js": "b()"])
        let failed = try #require(try events.wait(for: "rolled-back", timeout: 40))
        #expect(failed.int("from") == 2 && failed.int("to") == 1)
        // C (3) arrives and is on trial; the operator rolls it back.
        _ = try f.publishAndSync(["index.html": "C", "app.js": "c()"])
        #expect(try f.status()["trial"] as? Bool == true)
        let rollback = try Binary.run(["rollback", "--json"] + common(f))
        #expect(rollback.status == 0, "\(rollback.stderr)")
        #expect(try rollback.json()["to"] as? Int == 1, "the last confirmed generation, not the failed 2")
        let manual = try #require(try events.wait(for: "rolled-back", generation: 1))
        #expect(manual.string("reason") == "manual" && manual.int("from") == 3)
        #expect(try f.http.get("/app.js").text == "one()")
        let status = try f.status()
        #expect(status["generation"] as? Int == 1 && status["confirmedGeneration"] as? Int == 1 && status["trial"] as? Bool == false)
        await f.stop()
    }

    @Test func racingConfirmRollbackAndReadyOnOneTrialEndConsistent() async throws {
        let f = try await Fixture.start(["--confirm-timeout", "60"])
        let rounds = 16
        for round in 0..<rounds {
            let receipt = try f.publishAndSync(["index.html": "v\(round)", "app.js": "round\(round)()"])
            let generation = try #require((receipt["report"] as? [String: Any])?["generation"] as? Int)
            try waitUntil { try f.status()["trial"] as? Bool == true }
            let port = f.http.port
            let cli = common(f)
            // All three at once, each from its own process or connection.
            let results = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 3) { which in
                let outcome: String
                switch which {
                case 0: outcome = "confirm \((try? Binary.run(["confirm", "--generation", String(generation)] + cli))?.status ?? -1)"
                case 1: outcome = "rollback \((try? Binary.run(["rollback"] + cli))?.status ?? -1)"
                default:
                    let reply = try? RawHTTP(port: port).request("POST", "/_cenarius/ready", body: #"{"generation": \#(generation)}"#)
                    outcome = "ready \(reply?.status ?? -1)"
                }
                results.withLock { $0.append(outcome) }
            }
            // Whatever the order, the end is one of the consistent states: no trial, and the
            // current generation is the confirmed one; a generation rolled back from is not current.
            try waitUntil { try f.status()["trial"] as? Bool == false }
            let status = try f.status()
            let current = status["generation"] as? Int
            #expect(current == status["confirmedGeneration"] as? Int, "round \(round): \(results.withLock { $0 }) left \(status)")
            if let last = status["lastRollback"] as? [String: Any], last["from"] as? Int == generation {
                #expect(current != generation, "round \(round): rolled back from \(generation) but it is current")
            }
        }
        await f.stop()
    }

    @Test func aCommitByASyncProcessStartsItsTrialWhileTheDaemonRuns() async throws {
        let f = try await Fixture.start(["--confirm-timeout", "3"])
        let events = try EventStreamClient(port: f.http.port)
        // A `sync` from a shell commits generation 2 beside the running daemon.
        f.origin.publish(["index.html": "v2", "app.js": "two()"])
        let sync = try Binary.run(["sync", "--remote", f.origin.url] + common(f))
        #expect(sync.status == 0, "\(sync.stderr)")
        let committed = try #require(try events.wait(for: "committed", generation: 2))
        #expect(committed.bool("trial") == true, "the daemon took the commit in and put it on trial")
        // Unconfirmed, it is rolled back while the daemon runs (not at the next restart).
        let rolledBack = try #require(try events.wait(for: "rolled-back", timeout: 40))
        #expect(rolledBack.int("from") == 2 && rolledBack.string("reason") == "timeout")
        #expect(try #require(rolledBack.double("time")) >= committed.double("deadline") ?? .infinity, "not before the deadline")
        #expect(try f.http.get("/app.js").text == "one()")

        // A page of the next release confirms it even when its ready comes before the daemon
        // heard of the commit: the ready finds the trial, never a "confirmed" generation that
        // then goes on trial with itself as the fallback.
        f.origin.publish(["index.html": "v3", "app.js": "three()"])
        let next = try Binary.run(["sync", "--remote", f.origin.url] + common(f))
        #expect(next.status == 0, "\(next.stderr)")
        let readyAt = Date().timeIntervalSince1970
        let ready = try f.http.request("POST", "/_cenarius/ready", body: #"{"generation": 3}"#)
        #expect(ready.status == 200)
        #expect(try ready.json()["status"] as? String == "confirmed", "\(ready.text)")
        // The ready took the commit in (its trial began) before confirming it.
        #expect(try events.wait(for: "committed", generation: 3)?.bool("trial") == true)
        #expect(try events.wait(for: "confirmed", generation: 3) != nil)
        // Past the deadline a trial begun at the ready would have had, nothing is rolled back:
        // the stream stays quiet until then (a wait for an absence has to last that long).
        let quiet = readyAt + 3 + 3 - Date().timeIntervalSince1970
        #expect(try events.wait(for: "rolled-back", timeout: max(quiet, 0.1)) == nil)
        let status = try f.status()
        #expect(status["generation"] as? Int == 3 && status["confirmedGeneration"] as? Int == 3 && status["trial"] as? Bool == false)
        #expect((status["lastRollback"] as? [String: Any])?["from"] as? Int == 2)
        await f.stop()
    }

    @Test func aConfirmationWhileARollbackWaitsForTheLockIsRefusedAndTheEndIsConsistent() async throws {
        let f = try await Fixture.start(["--confirm-timeout", "8"])
        _ = try f.publishAndSync(["index.html": "v2", "app.js": "two()"])
        // Someone holds the writer lock (a long sync) past the trial's deadline, until the test
        // lets go of it.
        let holder = Process()
        let release = Pipe()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [f.dir.path("cache/lock"), "sh", "-c", "touch \(f.dir.path("locked")) && read line"]
        holder.standardInput = release
        try holder.run()
        defer { try? release.fileHandleForWriting.close() }
        try waitUntil { FileManager.default.fileExists(atPath: f.dir.path("locked")) }
        #expect(try f.status()["trial"] as? Bool == true, "the lock was taken before the deadline")
        // The rollback is decided (written to release.json before it is made) and waits for the lock.
        try waitUntil(timeout: 40) {
            let state = try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: f.dir.path("cache/release.json"))))
            return (state as? [String: Any])?["switching"] != nil
        }
        // A late page's ready must not be accepted only to be undone by it.
        let ready = try f.http.request("POST", "/_cenarius/ready", body: #"{"generation": 2}"#)
        #expect(ready.status == 409, "\(ready.text)")
        #expect(try f.http.get("/app.js").text == "two()", "the switch back still waits for the lock")
        try release.fileHandleForWriting.close()  // `read` ends, and the lock with it
        holder.waitUntilExit()
        try waitUntil { try f.status()["generation"] as? Int == 1 }
        let status = try f.status()
        #expect(status["confirmedGeneration"] as? Int == 1 && status["trial"] as? Bool == false)
        #expect(try f.http.get("/app.js").text == "one()")
        await f.stop()
    }
}
