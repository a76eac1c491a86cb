import Foundation
import Testing
import TestOrigin

/// `cenariusd why` (docs/why.md) on the built binary: each reason provoked for real, its code,
/// its exit code, and the same answer in `status --json` and `GET /_cenarius/why`.
@Suite(.awaitsCleanups) struct WhyTests {
    /// A publisher's folder served as a file:// remote, and one device.
    struct Fixture {
        let dir: Scratch
        var remote: String { dir.path("site") }
        var common: [String] { ["--remote", "file://" + remote] + Device(in: dir).flags }

        init() throws {
            dir = try Scratch.forTest()
        }

        func publish(_ page: String, _ options: [String] = []) throws {
            try dir.write("site/index.html", page)
            let routes = try Binary.run(["routes", remote] + options)
            #expect(routes.status == 0, "\(routes.stderr)")
        }

        @discardableResult
        func sync(_ extra: [String] = [], environment: [String: String] = [:]) throws -> Binary.Run {
            try Binary.run(["sync", "--json"] + common + extra, environment: environment)
        }

        /// `why --json` and its exit code.
        func why(_ extra: [String] = [], environment: [String: String] = [:]) throws -> (reason: String?, status: Int32, json: [String: Any]) {
            let run = try Binary.run(["why", "--json"] + extra + common, environment: environment)
            let json = (try? run.json()) ?? [:]
            return (json["reason"] as? String, run.status, json)
        }
    }

    @Test func fromNotPolledYetToCurrentAndOriginUnreachableAndUnchanged() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        func why(_ extra: [String] = []) throws -> (String?, Int32) {
            let run = try Binary.run(["why", "--json"] + extra + common)
            return ((try? run.json())?["reason"] as? String, run.status)
        }
        #expect(try why() == ("not-polled-yet", 2))
        #expect(try Binary.run(["sync"] + common).status == 0)
        #expect(try why() == ("current", 0))
        #expect(try why(["2099.1-z"]) == ("origin-unchanged", 2), "a release the origin does not serve yet")
        let status = try Binary.run(["status", "--json"] + common).json()
        #expect((status["why"] as? [String: Any])?["reason"] as? String == "current")
        // The next poll carries the code in its report, for `fleet` to count.
        origin.resetRequests()
        #expect(try Binary.run(["sync"] + common).status == 0)
        let report = origin.requests(for: "Routes.json").first?.headers["cenarius-report"] ?? ""
        #expect(report.contains("why=current"), "\(report)")
        await origin.shutdown()
        #expect(try Binary.run(["sync"] + common).status == 3)
        let (reason, code) = try why()
        #expect(reason == "origin-unreachable" && code == 3)
        #expect(try Binary.run(["why"] + common).stdout.hasPrefix("origin-unreachable: the last sync did not reach the remote"))
    }

    /// `origin-unchanged` rests on the last poll's answer: a copy served by a cache on the way,
    /// with its `Age` and `max-age`, says until when that edge may go on serving it.
    @Test func originUnchangedNamesHowStaleTheEdgeMayBe() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        origin.inject(.cached(age: 40, maxAge: 300), on: "Routes.json")
        #expect(try Binary.run(["sync"] + common).status == 0)
        let run = try Binary.run(["why", "2099.1-z", "--json"] + common)
        let answer = try run.json()
        #expect(answer["reason"] as? String == "origin-unchanged" && run.status == 2, "\(answer)")
        let evidence = try #require(answer["evidence"] as? [String: Any])
        #expect(evidence["age"] as? String == "40")
        #expect((evidence["cacheControl"] as? String)?.contains("max-age=300") == true)
        #expect((evidence["polled"] as? String)?.hasSuffix("/Routes.json") == true)
        #expect(evidence["status"] as? Double == 200)
        let polledAt = try #require(evidence["polledAt"] as? Double)
        let staleUntil = try #require(evidence["staleUntil"] as? Double)
        #expect(abs(staleUntil - polledAt - 260) < 1, "max-age 300 less an age of 40")
        let text = try Binary.run(["why", "2099.1-z"] + common).stdout
        #expect(text.contains("may serve unchanged until") && text.contains("what to do:"), "\(text)")
    }

    /// A sync under way says so with its progress; a second writer meanwhile gives up on the
    /// cache's lock, and once the first is killed that failure is the answer: `lock`.
    @Test func aRunningDownloadIsDownloadingAndAWriterBehindItIsLock() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        func why() throws -> (reason: String?, status: Int32, json: [String: Any]) {
            let run = try Binary.run(["why", "--json"] + common)
            let json = (try? run.json()) ?? [:]
            return (json["reason"] as? String, run.status, json)
        }
        origin.publish(["index.html": "v1"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        origin.publish(["index.html": "v2", "big.bin": String(repeating: "x", count: 1 << 20)])
        origin.inject(.stall, on: "big.bin")
        let running = try Binary.start(["sync"] + common)
        defer { running.signal(SIGKILL) }
        try waitUntil { try why().reason == "downloading" }
        let answer = try why()
        #expect(answer.status == 2)
        let evidence = try #require(answer.json["evidence"] as? [String: Any], "\(answer.json)")
        #expect(evidence["filesTotal"] as? Double == 2 && evidence["since"] as? Double != nil, "\(evidence)")
        #expect(try Binary.run(["why"] + common).stdout.hasPrefix("downloading: a sync is fetching"))

        let behind = try Binary.run(["sync"] + common, environment: ["CENARIUS_LOCK_WAIT": "0.3"])
        #expect(behind.status == 5 && behind.stderr.contains("locked"), "\(behind.stderr)")
        #expect(try why().reason == "downloading", "the sync under way is the answer while it runs")
        running.signal(SIGKILL)
        running.waitUntilExit()
        let after = try why()
        #expect(after.reason == "lock" && after.status == 5, "\(after.json)")

        origin.clearFaults()
        #expect(try Binary.run(["sync"] + common).status == 0)
        #expect(try why().reason == "current")
    }

    /// A device provisioned wrong says so from its very first sync, which records how it ended as
    /// every sync does: an origin that is down, a channel the remote does not publish, a key the
    /// remote does not sign with. No cache structure is left behind.
    @Test func aFailedFirstSyncSaysWhyNotThatNothingRan() throws {
        let device = try Fixture()
        for key in ["k", "stranger"] { try device.dir.keygen(key) }
        try device.publish("v1", ["--sign-key", device.dir.path("k.key")])
        let cases: [(name: String, flags: [String], reason: String, status: Int32)] = [
            ("down", ["--remote", Binary.downRemote], "origin-unreachable", 3),
            ("channel", ["--remote", "file://" + device.remote, "--channel", "gamma"], "origin-unreachable", 3),
            ("key", ["--remote", "file://" + device.remote, "--public-key", device.dir.path("stranger.pub")], "signature", 4),
        ]
        for (name, flags, reason, status) in cases {
            let places = Device(cache: device.dir.path(name), preset: device.dir.path("preset")).flags
            #expect(try Binary.run(["sync"] + flags + places).status == status, "\(name)")
            let run = try Binary.run(["why", "--json"] + flags + places)
            let answer = try run.json()
            #expect(answer["reason"] as? String == reason && run.status == status, "\(name): \(answer)")
            let evidence = answer["evidence"] as? [String: Any] ?? [:]
            #expect(evidence["at"] is Double && evidence["detail"] is String, "\(name): the failure's evidence: \(answer)")
            let left = try FileManager.default.contentsOfDirectory(atPath: device.dir.path(name))
            #expect(left.contains("last-sync.json") && Set(left).isDisjoint(with: ["objects", "generations", "tmp"]), "\(name): the record, no cache: \(left)")
            // A cache that holds only that record is as fresh as none: the next failure leaves it so.
            guard left == ["last-sync.json"] else { continue }
            #expect(try Binary.run(["sync"] + flags + places).status == status, "\(name)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: device.dir.path(name)) == ["last-sync.json"], "\(name)")
        }
    }

    @Test func anExpiredSignatureIsSignature() throws {
        let device = try Fixture()
        try device.dir.keygen("k")
        let keys = ["--public-key", device.dir.path("k.pub")]
        try device.publish("v1", ["--sign-key", device.dir.path("k.key")])
        #expect(try device.sync(keys).status == 0)
        try device.publish("v2", ["--sign-key", device.dir.path("k.key"), "--expires", "1h"])
        // Two hours later on the device's clock: the new release's signature has expired.
        let later = ["CENARIUS_CLOCK_OFFSET": "7200"]
        #expect(try device.sync(keys, environment: later).status == 4)
        let answer = try device.why(keys, environment: later)
        #expect(answer.reason == "signature" && answer.status == 4, "\(answer.json)")
        #expect(((answer.json["evidence"] as? [String: Any])?["detail"] as? String)?.contains("expired") == true)
    }

    @Test func aStagedMomentANativeGateAndAHaltAreEachTheirOwnCode() throws {
        let device = try Fixture()
        try device.publish("v1", ["--release", "r1"])
        #expect(try device.sync().status == 0)
        #expect(try device.why().reason == "current")

        try device.publish("v2", ["--release", "r2", "--rollout-start", String(Int(Date().timeIntervalSince1970) + 86_400)])
        #expect(try device.sync().json()["outcome"] as? String == "deferred")
        var answer = try device.why()
        #expect(answer.reason == "deferred-moment" && answer.status == 2 && answer.json["release"] as? String == "r2", "\(answer.json)")
        #expect((answer.json["evidence"] as? [String: Any])?["at"] as? Double != nil, "when it adopts")

        try device.publish("v3", ["--release", "r3", "--requires-native", "9.0"])
        #expect(try device.sync(["--native-version", "1.0"]).json()["outcome"] as? String == "deferred")
        answer = try device.why(["--native-version", "1.0"])
        #expect(answer.reason == "deferred-native" && answer.json["release"] as? String == "r3", "\(answer.json)")

        try device.publish("v4", ["--release", "r4", "--halted"])
        #expect(try device.sync().json()["outcome"] as? String == "deferred")
        answer = try device.why()
        #expect(answer.reason == "halted", "\(answer.json)")
        #expect(try device.why(["r1"]).reason == "current", "asked about the release in force")
    }

    @Test func aRolledBackReleaseIsHeldBack() throws {
        let device = try Fixture()
        try device.publish("v1", ["--release", "r1"])
        #expect(try device.sync().status == 0)
        try device.publish("v2", ["--release", "r2"])
        #expect(try device.sync().status == 0)
        #expect(try Binary.run(["rollback"] + Array(device.common.dropFirst(2))).status == 0)
        #expect(try device.sync().json()["outcome"] as? String == "held-back")
        let answer = try device.why()
        #expect(answer.reason == "held-back" && answer.status == 4, "\(answer.json)")
    }

    @Test func developModeIsDevelopMode() throws {
        let device = try Fixture()
        let answer = try device.why(["--develop", "--develop-dir", device.dir.path("www")])
        #expect(answer.reason == "develop-mode" && answer.status == 2, "\(answer.json)")
        // The contract's object always has "release": null when no release applies.
        #expect(answer.json.keys.contains("release") && answer.json["release"] is NSNull, "\(answer.json)")
    }

    /// A switch on trial, and a release waiting for a hold, through the running daemon, which
    /// answers `GET /_cenarius/why` as `why --json` does.
    @Test func aTrialAndAHoldThroughTheDaemon() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--confirm-timeout", "120"])
        let http = try daemon.waitUntilServing()
        let cli = Device(in: dir).flags + ["--remote", origin.url]
        func why() throws -> String? { try Binary.run(["why", "--json"] + cli).json()["reason"] as? String }
        origin.publish(["index.html": "v2"])
        _ = try http.request("POST", "/_cenarius/sync")
        try waitUntil { try why() == "trial" }
        #expect(try http.get("/_cenarius/why").json()["reason"] as? String == "trial")
        // A dashboard polling the daemon's status reads the same answer as `status --json`.
        let status = try http.get("/_cenarius/status").json()
        #expect((status["why"] as? [String: Any])?["reason"] as? String == "trial", "\(status)")
        #expect((try Binary.run(["status", "--json"] + cli).json()["why"] as? [String: Any])?["reason"] as? String == "trial")

        _ = try http.request("POST", "/_cenarius/hold", headers: ["Content-Type": "application/json"], body: #"{"ttl": 600, "reason": "a sale"}"#)
        origin.publish(["index.html": "v3"])
        _ = try http.request("POST", "/_cenarius/sync")
        try waitUntil { try why() == "held" }
        #expect(try http.get("/_cenarius/why").json()["reason"] as? String == "held")
        #expect(daemon.terminate().status == 0)
    }

    /// `fleet` counts devices per code from the reports in an access log, each by its latest.
    @Test func fleetCountsDevicesPerCode() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let lines = [("d1", "current", 1), ("d2", "origin-unreachable", 1), ("d2", "current", 2), ("d3", "deferred-moment", 1), ("d4", "", 1)]
        let log = lines.map { device, why, time in
            #"{"time":"\#(1_764_000_000 + time)","report":"device=\"\#(device)\", release=\"r1\", state=confirmed\#(why.isEmpty ? "" : ", why=" + why)"}"#
        }.joined(separator: "\n") + "\n"
        try dir.write("access.log", log)
        let run = try Binary.run(["fleet", dir.path("access.log"), "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let counts = try #require(try run.json()["why"] as? [String: Int], "\(run.stdout)")
        #expect(counts == ["current": 2, "deferred-moment": 1])
        #expect(try Binary.run(["fleet", dir.path("access.log")]).stdout.contains("why: current 2, deferred-moment 1"))
    }
}
