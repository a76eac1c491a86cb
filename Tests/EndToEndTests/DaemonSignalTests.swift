import Foundation
import Synchronization
import Testing
import TestOrigin

/// The daemon's promises about signals, event streams and readers (docs/service.md, G2, G6), run on the
/// built binary.
@Suite(.awaitsCleanups) struct DaemonSignalTests {
    /// SIGHUP re-reads the configuration and syncs: a daemon moved to another remote serves its files.
    @Test func sighupReloadsTheConfigurationAndSyncs() async throws {
        let first = try await TestOrigin()
        let second = try await TestOrigin()
        let dir = try Scratch()
        Cleanups.add { await first.shutdown(); await second.shutdown(); dir.remove() }
        first.publish(["app.js": "first()"])
        second.publish(["app.js": "second()"])
        try dir.write("config.json", #"{"remote": "\#(first.url)"}"#)
        let daemon = try DaemonProcess(["--config", dir.path("config.json"), "--preset", dir.path("preset"), "--interval", "3600"], cache: dir.path("cache"))
        let http = try daemon.waitUntilServing()
        #expect(try http.get("/app.js").text == "first()")

        try dir.write("config.json", #"{"remote": "\#(second.url)"}"#)
        daemon.process.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(20)
        var served = ""
        while Date() < deadline {
            served = try http.get("/app.js").text
            if served == "second()" { break }
            usleep(100_000)
        }
        #expect(served == "second()")
        #expect(second.requests(for: "Routes.json").count >= 1)
        #expect(daemon.process.isRunning)
    }

    /// SIGHUP re-reads every setting but the start-only ones, and each reaches the part that uses
    /// it: here the trial policy (the release machine's: a switch after the reload is on trial,
    /// one before was not) beside the remote; a start-only setting that changed is kept and said.
    @Test func sighupReachesTheTrialPolicyAndSaysWhatWaitsForARestart() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["app.js": "one()"])
        try dir.write("config.json", #"{"remote": "\#(origin.url)"}"#)
        let daemon = try DaemonProcess(["--config", dir.path("config.json"), "--preset", dir.path("preset"), "--interval", "3600"], cache: dir.path("cache"))
        let http = try daemon.waitUntilServing()
        let status = { try http.get("/_cenarius/status").json()["cache"] as? [String: Any] ?? [:] }
        #expect(try http.get("/app.js").text == "one()")
        #expect(try status()["trial"] as? Bool == false)

        origin.publish(["app.js": "two()"])
        try dir.write("config.json", #"{"remote": "\#(origin.url)", "confirm-timeout": 60, "develop-dir": "\#(dir.path("elsewhere"))"}"#)
        daemon.process.signal(SIGHUP)
        try waitUntil(timeout: 20) { try http.get("/app.js").text == "two()" }
        // The release machine takes the switch in just after the link moves (a busy machine shows the gap).
        try waitUntil(timeout: 20) { try status()["trial"] as? Bool == true }
        #expect(try status()["trial"] as? Bool == true, "the reloaded --confirm-timeout put the switch on trial")
        #expect(daemon.terminate().status == 0)
        let log = daemon.stderr
        #expect(log.contains("read at start only") && log.contains("until the daemon restarts: develop-dir"), "\(log)")
    }

    /// SIGINT stops the daemon cleanly within 5 s, as SIGTERM does, and frees the cache for the next one.
    @Test func sigintStopsTheDaemonCleanly() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["app.js": "v1"])
        let common = ["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"]
        let daemon = try DaemonProcess(common, cache: dir.path("cache"))
        _ = try daemon.waitUntilServing()
        let started = Date()
        daemon.process.signal(SIGINT)
        daemon.process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(daemon.process.terminationReason == .exit && daemon.process.terminationStatus == 0)
        // The lock went with it: a second daemon starts on the same cache.
        let next = try DaemonProcess(common, cache: dir.path("cache"))
        #expect(try next.waitUntilServing().get("/app.js").text == "v1")
    }

    /// An idle event stream gets a comment line before 30 s pass, so proxies and browsers keep it open.
    @Test func idleEventStreamsGetAKeepAliveComment() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["app.js": "v1"])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        _ = try daemon.waitUntilServing()
        let stream = try EventStreamClient(port: daemon.port)
        let opened = Date()
        // The stream opens with a comment of its own; the keep-alive is the second.
        while stream.comments < 2, Date().timeIntervalSince(opened) < 31 {
            _ = try? stream.next(1, timeout: 1)
        }
        #expect(stream.comments >= 2, "no keep-alive comment on an idle stream after \(Date().timeIntervalSince(opened)) s")
    }

    /// G2 and G6: `resolve` processes running while the daemon switches generations never fail and never
    /// hand out a path whose bytes differ from the hash they report.
    @Test func resolveProcessesDuringSwitchesSeeWholeVerifiedFiles() async throws {
        let (origin, dir, common) = try await OriginAndDevice.make()
        func release(_ n: Int) -> [String: String] {
            ["index.html": "<h1>release \(n)</h1>", "js/app.js": String(repeating: "release(\(n));", count: 4000)]
        }
        origin.publish(release(0))
        let daemon = try Device(in: dir).serve(remote: origin.url)
        let http = try daemon.waitUntilServing()

        let stop = Atomic(false)
        let failures = Mutex<[String]>([])
        let answers = Atomic(0)
        let readers = (0..<3).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) {
                    do {
                        let run = try Binary.run(["resolve", "js/app.js", "--json", "--offline"] + common)
                        guard run.status == 0 else { throw TLSOrigin.Failure("exit \(run.status): \(run.stderr)") }
                        let json = try run.json()
                        guard let path = json["path"] as? String else { throw TLSOrigin.Failure("no path: \(run.stdout)") }
                        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
                        guard TestOrigin.md5(bytes) == json["hash"] as? String else {
                            throw TLSOrigin.Failure("\(path) does not hash to \(json["hash"] ?? "nil")")
                        }
                        answers.add(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        readers.forEach { $0.start() }
        for n in 1...8 {
            origin.publish(release(n))
            let accepted = try http.request("POST", "/_cenarius/sync")
            let receipt = try waitForReceipt(http, try #require(try accepted.json()["id"] as? String))
            #expect(receipt["status"] as? String == "SUCCEED")
        }
        stop.store(true, ordering: .relaxed)
        while readers.contains(where: { !$0.isFinished }) { usleep(20_000) }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(answers.load(ordering: .relaxed) >= 8)
        #expect(try http.get("/js/app.js").text == release(8)["js/app.js"])
    }
}
