import Foundation
import RouteSync
import Testing
import TestOrigin

/// Issue 28: one typo on the origin side (a rollout start in milliseconds, a Retry-After of
/// twenty digits, an entry size of Int64.max, a 100 KB ETag) must not crash `sync`, `serve` or
/// `status`: the built binary exits with the contract's code, the table in force stays, and the
/// daemon keeps answering. Each value here killed the binary with SIGILL before.
@Suite(.serialized, .awaitsCleanups) struct HostileNumbersTests {
    struct Fixture {
        let origin: TestOrigin
        let dir: Scratch
        var common: [String] { ["--remote", origin.url] + Device(in: dir).flags + ["--device-id", "kiosk-1"] }

        func sync() throws -> Binary.Run { try Binary.run(["sync"] + common) }

        func app() throws -> String {
            let path = try Binary.run(["resolve", "app.js", "--offline"] + common).stdout.trimmingCharacters(in: .newlines)
            return (try? String(contentsOfFile: path, encoding: .utf8)) ?? "?"
        }
    }

    func device() async throws -> Fixture {
        let device = Fixture(origin: try await TestOrigin(), dir: try Scratch())
        Cleanups.add { await device.origin.shutdown(); device.dir.remove() }
        device.origin.publish(["index.html": "v1", "app.js": "one()"])
        #expect(try device.sync().status == 0)
        return device
    }

    /// Manifests with numbers out of range, or known keys of the wrong type or shape: refused
    /// like a bad table (exit 4, naming the key), the table in force stays, and `status`,
    /// `verify` and `resolve` still work.
    @Test func hostileManifestsAreRefusedAndTheTableInForceStays() async throws {
        let d = try await device()
        d.origin.publish(["index.html": "v2", "app.js": "two()"])
        let manifests: [(String, String)] = [
            (#"{"rollout": {"start": 0, "duration": 1e20}}"#, "rollout.duration"),
            (#"{"rollout": {"start": 9.3e18}}"#, "rollout.start"),
            (#"{"rollout": {"start": 1e308}}"#, "rollout.start"),
            (#"{"rollout": {"start": 1e300, "duration": 60}}"#, "rollout.start"),
            (#"{"rollout": {"start": "NOW"}}"#, "rollout.start"),
            (#"{"rollout": {"duration": true}}"#, "rollout.duration"),
            (#"{"requires": "99.0"}"#, "\"requires\""),
            (#"{"rollout": "x"}"#, "\"rollout\""),
            (#"{"rollout": [1,2]}"#, "\"rollout\""),
        ]
        for (manifest, key) in manifests {
            d.origin.put("Routes.json.release", manifest)
            let run = try d.sync()
            #expect(run.status == 4, "\(manifest): exit \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(key), "\(manifest): \(run.stderr)")
            #expect(try d.app() == "one()", "\(manifest)")
        }
        #expect(try Binary.run(["status"] + d.common).status == 0)
        #expect(try Binary.run(["verify"] + d.common).status == 0)

        // A start centuries away (1e16 s: milliseconds by mistake) is a valid manifest that defers;
        // `status` shows the pending release without trapping.
        d.origin.put("Routes.json.release", #"{"release": "far", "rollout": {"start": 1e16, "duration": 3600}}"#)
        let far = try Binary.run(["sync", "--json"] + d.common)
        #expect(far.status == 0, "\(far.stderr)")
        #expect(try far.json()["outcome"] as? String == "deferred")
        #expect(try d.app() == "one()")
        let status = try Binary.run(["status"] + d.common)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("pending:") && status.stdout.contains("far"), "\(status.stdout)")
        #expect(try Binary.run(["status", "--json"] + d.common).status == 0)
    }

    /// A Retry-After of twenty digits, 1e308 or -5 on a 503 or 429: a remote error (exit 3),
    /// never a trap; the table in force stays.
    @Test(arguments: [503, 429])
    func hostileRetryAfterIsARemoteError(_ code: Int) async throws {
        let d = try await device()
        for value in ["99999999999999999999", "1e308", "-5", "+7", String(repeating: "9", count: 400)] {
            d.origin.inject(.status(code, retryAfter: value), on: "Routes.json")
            let run = try d.sync()
            #expect(run.status == 3, "Retry-After \(value): exit \(run.status) \(run.stderr)")
            #expect(try d.app() == "one()")
        }
    }

    /// Entry sizes: one past any sane range is an invalid table (exit 4); sizes each in range
    /// whose sum passes any disk fail the free-space check (exit 5). Neither traps.
    @Test func hugeEntrySizesAreAnInvalidTableOrAFreeSpaceFailure() async throws {
        let d = try await device()
        let hash = String(repeating: "a", count: 32)
        d.origin.publish(["index.html": "v2", "app.js": "two()"], extraEntries: #"{"uri": "big.bin", "hash": "\#(hash)", "size": 9223372036854775807}"#)
        let invalid = try d.sync()
        #expect(invalid.status == 4, "\(invalid.stderr)")
        #expect(invalid.stderr.contains("size"), "\(invalid.stderr)")
        #expect(try d.app() == "one()")

        let limit = 1 << 53
        let entries = (1...3).map { #"{"uri": "big\#($0).bin", "hash": "\#(String(repeating: "\($0)", count: 32))", "size": \#(limit)}"# }
        // Every size declared (else the free-space check has no total to go by).
        d.origin.publish(["index.html": Array("v2".utf8), "app.js": Array("two()".utf8)], extraEntries: entries.joined(separator: ",\n"), sizes: true)
        let full = try d.sync()
        #expect(full.status == 5, "\(full.stderr)")
        #expect(full.stderr.contains("free space"), "\(full.stderr)")
        #expect(try d.app() == "one()")
        #expect(try Binary.run(["status"] + d.common).status == 0)
    }

    /// A 100 KB ETag is not stored: the next poll is unconditional (the origin would refuse a
    /// request carrying it with 431), so a new release is still seen.
    @Test func anOverlongETagIsNotSentBack() async throws {
        let d = try await device()
        let huge = "\"" + String(repeating: "e", count: 100_000) + "\""
        d.origin.inject(.etag(huge), on: "Routes.json")
        d.origin.publish(["index.html": "v2", "app.js": "two()"])
        #expect(try d.sync().status == 0)
        #expect(try d.app() == "two()")
        d.origin.publish(["index.html": "v3", "app.js": "three()"])
        d.origin.resetRequests()
        let again = try d.sync()
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try d.app() == "three()")
        let polls = d.origin.requests(for: "Routes.json")
        #expect(!polls.isEmpty && polls.allSatisfy { $0.headers["if-none-match"] == nil })
    }

    /// The daemon meets every hostile value above in turn and keeps serving: each sync fails
    /// with its code, the table in force stays, `/health` answers with the failure, and the
    /// control API answers 400 naming the field for bodies out of range.
    @Test func theDaemonKeepsServingThroughHostileValues() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1", "app.js": "one()"])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()

        func syncFails(_ desc: String, _ what: String) throws {
            let id = try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String)
            let receipt = try waitForReceipt(http, id)
            #expect(receipt["status"] as? String == "FAILED" && receipt["desc"] as? String == desc, "\(what): \(receipt)")
            #expect(daemon.process.isRunning, "\(what) stopped the daemon")
            #expect(try http.get("/app.js").text == "one()", "\(what)")
            let health = try http.get("/health")
            let last = (try health.json()["sync"] as? [String: Any])?["last"] as? [String: Any]
            #expect(health.status == 200 && last?["outcome"] as? String == "failed" && last?["desc"] as? String == desc, "\(what): \(last ?? [:])")
        }

        origin.publish(["index.html": "v2", "app.js": "two()"])
        for manifest in [#"{"rollout": {"start": 0, "duration": 1e20}}"#, #"{"rollout": {"start": 1e308}}"#, #"{"rollout": "x"}"#] {
            origin.put("Routes.json.release", manifest)
            try syncFails("INTEGRITY", manifest)
        }
        // The reason is in the receipt, in `status` and in the sync-failed event (replayed from the
        // start of the stream, so that the test does not race the event's publication).
        origin.put("Routes.json.release", #"{"rollout": {"start": 9.3e18}}"#)
        let refused = try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String)
        #expect((try waitForReceipt(http, refused)["message"] as? String)?.contains("rollout.start") == true)
        let status = try Device(in: dir).run(["status"])
        #expect(status.status == 0 && status.stdout.contains("rollout.start"), "\(status.stdout)")
        let events = try EventStreamClient(port: http.port, lastEventID: "0")
        func isRefusal(_ event: EventStreamClient.Event) -> Bool {
            event.name == "sync-failed" && event.string("message")?.contains("rollout.start") == true
        }
        var seen: [EventStreamClient.Event] = []
        let deadline = Date().addingTimeInterval(10)
        while !seen.contains(where: isRefusal), deadline.timeIntervalSinceNow > 0 {
            seen += try events.next(1, timeout: deadline.timeIntervalSinceNow)
        }
        #expect(seen.first(where: isRefusal)?.string("desc") == "INTEGRITY", "\(seen.map(\.name))")
        #expect(seen.first(where: isRefusal)?.string("why") == "integrity", "the event carries why's code (docs/why.md)")
        origin.remove("Routes.json.release")
        for value in ["99999999999999999999", "1e308", "-5"] {
            origin.inject(.status(503, retryAfter: value), on: "Routes.json")
            try syncFails("REMOTE", "503 Retry-After \(value)")
            origin.inject(.status(429, retryAfter: value), on: "Routes.json")
            try syncFails("REMOTE", "429 Retry-After \(value)")
        }
        origin.clearFaults()
        let hash = String(repeating: "a", count: 32)
        origin.publish(["index.html": "v2", "app.js": "two()"], extraEntries: #"{"uri": "big.bin", "hash": "\#(hash)", "size": 9223372036854775807}"#)
        try syncFails("INTEGRITY", "size Int64.max")

        // Control API bodies out of range: 400 naming the field; the daemon goes on.
        for (path, body, field) in [("/_cenarius/hold", #"{"ttl": 1e300}"#, "ttl"), ("/_cenarius/hold", #"{"ttl": -1}"#, "ttl"),
                                    ("/_cenarius/hold", #"{"ttl": "60"}"#, "ttl"), ("/_cenarius/hold", #"{"ttl": 60, "reason": 5}"#, "reason"),
                                    ("/_cenarius/ready", #"{"generation": 1e300}"#, "generation"),
                                    ("/_cenarius/ready", #"{"generation": 99999999999999999999}"#, "generation"),
                                    ("/_cenarius/ready", #"{"generation": 1.5}"#, "generation")] {
            let reply = try http.request("POST", path, body: body)
            #expect(reply.status == 400, "\(body): \(reply.status)")
            #expect(reply.text.contains(field), "\(body): \(reply.text)")
        }
        #expect(daemon.process.isRunning)

        // The origin fixed: the daemon adopts the new release.
        origin.publish(["index.html": "v3", "app.js": "three()"])
        let id = try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String)
        #expect(try waitForReceipt(http, id)["status"] as? String == "SUCCEED")
        #expect(try http.get("/app.js").text == "three()")
        #expect(try http.get("/health").status == 200)
    }
}
