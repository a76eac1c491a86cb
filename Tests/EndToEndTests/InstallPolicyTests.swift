import Foundation
import Testing
import TestOrigin

/// Install policies on the daemon (docs/install-policies.md): when a release downloads (a window,
/// a metered link) and when it switches (a window, an inhibit file, `--switch-at start`), each
/// with windows computed from the current time and the daemon's clock moved by
/// CENARIUS_CLOCK_OFFSET instead of waiting; and a failed trial's rollback, which none delays.
@Suite(.serialized, .awaitsCleanups) struct InstallPolicyTests {
    /// `daily HH:MM-HH:MM` from `from` to `to` minutes after now, in UTC (the daemons run with TZ=UTC).
    static func window(_ from: Int, _ to: Int) -> String {
        func clock(_ minutes: Int) -> String {
            let moment = Date().addingTimeInterval(Double(minutes) * 60)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.hour, .minute], from: moment)
            return String(format: "%02d:%02d", parts.hour!, parts.minute!)
        }
        return "daily \(clock(from))-\(clock(to))"
    }

    struct Fixture {
        let origin: TestOrigin
        let dir: Scratch
        let flags: [String]

        init(_ flags: [String]) async throws {
            origin = try await TestOrigin()
            dir = try Scratch()
            Cleanups.add { [origin, dir] in await origin.shutdown(); dir.remove() }
            self.flags = ["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"] + flags
            origin.publish(["index.html": "v1", "app.js": "one()"])
        }

        func start(_ extra: [String] = [], offset: Double = 0) throws -> (DaemonProcess, RawHTTP) {
            let daemon = try DaemonProcess(flags + extra, cache: dir.path("cache"),
                                           environment: ["TZ": "UTC", "CENARIUS_CLOCK_OFFSET": String(offset)])
            return (daemon, try daemon.waitUntilServing())
        }

        /// A sync requested over HTTP, once it has ended: its report.
        func sync(_ http: RawHTTP, _ path: String = "/_cenarius/sync", body: String = "") throws -> [String: Any] {
            let receipt = try waitForReceipt(http, try #require(try http.request("POST", path, body: body).json()["id"] as? String))
            return receipt["report"] as? [String: Any] ?? [:]
        }

        /// A release whose table gives sizes, as `routes` writes it (what `--metered small:SIZE` reads).
        func publish(_ files: [String: String]) { origin.publish(files.mapValues { Array($0.utf8) }, sizes: true) }

        func why(_ http: RawHTTP) throws -> String? { try http.get("/_cenarius/why").json()["reason"] as? String }
    }

    @Test func aDownloadWaitsForItsWindowAndAMeteredLink() async throws {
        // An hour away: a test queued behind others on a loaded machine must not reach it by waiting.
        let device = try await Fixture(["--download-window", Self.window(60, 120), "--metered", "small:1K"])
        var (daemon, http) = try device.start()
        try waitUntil { try http.get("/app.js").text == "one()" }
        device.origin.publish(["index.html": "v2", "app.js": "two()" + String(repeating: " ", count: 4000)])
        let waiting = try device.sync(http)
        #expect(waiting["outcome"] as? String == "deferred" && waiting["downloadedFiles"] as? Int == 0, "\(waiting)")
        #expect((waiting["deferred"] as? [String: Any])?["reason"] as? String == "download-window")
        #expect(try device.why(http) == "download-window")
        let status = try http.get("/_cenarius/status").json()
        #expect("\(status)".contains("download-window"), "status shows what the release waits for")
        // A poll while it waits costs a 304, not the table.
        device.origin.resetRequests()
        _ = try device.sync(http)
        #expect(device.origin.requests.allSatisfy { $0.path != "app.js" })
        _ = daemon.terminate()

        // 67 minutes later (the daemon's clock moved, not the test's) the window is open.
        (daemon, http) = try device.start(offset: 4000)
        try waitUntil { try http.get("/app.js").text.hasPrefix("two()") }
        _ = daemon.terminate()

        // A metered link: a release over small:1K waits, one under it does not.
        _ = FileManager.default.createFile(atPath: device.dir.path("METERED"), contents: nil)
        (daemon, http) = try device.start(["--metered-file", device.dir.path("METERED")], offset: 4000)
        device.publish(["index.html": "v3", "app.js": "three()" + String(repeating: " ", count: 4000)])
        let metered = try device.sync(http)
        #expect((metered["deferred"] as? [String: Any])?["reason"] as? String == "metered", "\(metered)")
        #expect(try device.why(http) == "metered")
        device.publish(["index.html": "v4", "app.js": "four()"])
        #expect(try device.sync(http)["outcome"] as? String == "committed", "a small release goes over a metered link")
        try FileManager.default.removeItem(atPath: device.dir.path("METERED"))
        device.publish(["index.html": "v5", "app.js": "five()" + String(repeating: " ", count: 4000)])
        #expect(try device.sync(http)["outcome"] as? String == "committed", "the metered file gone: within one poll")
        _ = daemon.terminate()
    }

    @Test func aSwitchWaitsForAnInhibitFileAndAWindowAndForceOverridesThem() async throws {
        let device = try await Fixture([])
        let inhibit = device.dir.path("customer-at-screen")
        var (daemon, http) = try device.start(["--inhibit-file", inhibit])
        try waitUntil { try http.get("/app.js").text == "one()" }
        _ = FileManager.default.createFile(atPath: inhibit, contents: nil)
        device.origin.publish(["index.html": "v2", "app.js": "two()"])
        let inhibited = try device.sync(http)
        #expect(inhibited["outcome"] as? String == "held" && inhibited["downloadedFiles"] as? Int == 2, "downloaded, not switched: \(inhibited)")
        #expect(try device.why(http) == "inhibited")
        #expect(try http.get("/app.js").text == "one()")
        try FileManager.default.removeItem(atPath: inhibit)
        let after = try device.sync(http)
        #expect(after["outcome"] as? String == "committed" && after["downloadedFiles"] as? Int == 0, "staged: nothing downloaded again: \(after)")
        #expect(try http.get("/app.js").text == "two()")
        _ = daemon.terminate()

        (daemon, http) = try device.start(["--switch-window", Self.window(30, 40)])
        device.origin.publish(["index.html": "v3", "app.js": "three()"])
        #expect(try device.sync(http)["outcome"] as? String == "held")
        #expect(try device.why(http) == "switch-window")
        #expect(try http.request("POST", "/_cenarius/switch", body: "{\"force\": 1}").status == 400, "force is true or false")
        let forced = try device.sync(http, "/_cenarius/switch", body: "{\"force\": true}")
        #expect(forced["outcome"] as? String == "committed", "\(forced)")
        #expect(try http.get("/app.js").text == "three()")

        // The command line asks the running daemon the same.
        device.origin.publish(["index.html": "v4", "app.js": "four()"])
        #expect(try device.sync(http)["outcome"] as? String == "held")
        let command = try Device(cache: device.dir.path("cache")).run(["switch", "--force", "--json"])
        #expect(command.status == 0 && (try? command.json()["outcome"] as? String) == "committed", "\(command.stdout) \(command.stderr)")
        _ = daemon.terminate()
    }

    /// An operator typing `cenariusd switch` means now: it overrides a closed window without
    /// `--force` (which scripts may still pass), through the running daemon and without one.
    @Test func switchFromTheShellOverridesAClosedWindowWithoutForce() async throws {
        let device = try await Fixture([])
        let window = ["--switch-window", Self.window(30, 40)]
        let (daemon, http) = try device.start(window)
        try waitUntil { try http.get("/app.js").text == "one()" }
        device.origin.publish(["index.html": "v2", "app.js": "two()"])
        #expect(try device.sync(http)["outcome"] as? String == "held")
        let asked = try Device(cache: device.dir.path("cache")).run(["switch", "--json"])
        #expect(asked.status == 0 && (try? asked.json()["outcome"] as? String) == "committed", "through the daemon: \(asked.stdout) \(asked.stderr)")
        #expect(try http.get("/app.js").text == "two()")
        _ = daemon.terminate()

        device.origin.publish(["index.html": "v3", "app.js": "three()"])
        let here = try Device(cache: device.dir.path("cache")).run(["switch", "--json"] + device.flags + window, environment: ["TZ": "UTC"])
        #expect(here.status == 0 && (try? here.json()["outcome"] as? String) == "committed", "without a daemon: \(here.stdout) \(here.stderr)")
        let forced = try Device(cache: device.dir.path("cache")).run(["switch", "--force", "--json"] + device.flags + window, environment: ["TZ": "UTC"])
        #expect(forced.status == 0, "--force is still accepted: \(forced.stderr)")
    }

    @Test func switchAtStartSwitchesOnRestartOrWhenTheAppAsksAndSurvivesSIGKILL() async throws {
        let device = try await Fixture(["--switch-at", "start"])
        var (daemon, http) = try device.start()
        try waitUntil { try http.get("/app.js").text == "one()" }
        device.origin.publish(["index.html": "v2", "app.js": "two()"])
        #expect(try device.sync(http)["outcome"] as? String == "held")
        #expect(try device.why(http) == "switch-at-start")
        #expect(try device.sync(http, "/_cenarius/switch")["outcome"] as? String == "committed", "the app asks")
        #expect(try http.get("/app.js").text == "two()")

        device.origin.publish(["index.html": "v3", "app.js": "three()"])
        #expect(try device.sync(http)["outcome"] as? String == "held")
        daemon.process.signal(SIGKILL)
        daemon.process.waitUntilExit()
        let restarted = Date()
        (daemon, http) = try device.start()
        try waitUntil(timeout: 10) { try http.get("/app.js").text == "three()" }
        #expect(Date().timeIntervalSince(restarted) < 10, "a restart switches within seconds")
        _ = daemon.terminate()
    }

    @Test func aFailedTrialRollsBackWhateverTheWindowsAndInhibitFilesSay() async throws {
        let device = try await Fixture(["--health-cmd", #"test "$CENARIUS_GENERATION" -lt 2"#, "--confirm-timeout", "20"])
        let inhibit = device.dir.path("busy")
        let (daemon, http) = try device.start(["--inhibit-file", inhibit, "--switch-window", Self.window(30, 40)])
        try waitUntil { try http.get("/app.js").text == "one()" }
        device.origin.publish(["index.html": "v2", "app.js": "two()"])
        #expect(try device.sync(http)["outcome"] as? String == "held")
        _ = FileManager.default.createFile(atPath: inhibit, contents: nil)
        let events = try EventStreamClient(port: http.port, lastEventID: "0")
        #expect(try device.sync(http, "/_cenarius/switch", body: "{\"force\": true}")["outcome"] as? String == "committed")
        // The health check fails generation 2: it is rolled back with the inhibit file there and the window shut.
        #expect(try events.wait(for: "rolled-back", timeout: 40) != nil)
        #expect(try http.get("/app.js").text == "one()")
        _ = daemon.terminate()

        // A window that can never open, or a policy that is not one, is a usage error at start.
        for bad in [["--switch-window", "daily 10:00-10:00"], ["--download-window", "Mon-Fry 01:00-02:00"], ["--metered", "sometimes"], ["--switch-at", "noon"]] {
            let run = try Device(cache: device.dir.path("bad")).run(["serve", "--remote", device.origin.url] + bad)
            #expect(run.status == 64, "\(bad): \(run.stderr)")
        }
    }
}
