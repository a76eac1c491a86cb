import Foundation
import Testing
import TestOrigin

/// G11: a password in the remote URL and a `--header` value, planted, then looked for in every
/// channel a user, a page or a log collector can read: the commands' stdout and stderr (text and
/// JSON), the daemon's log (text and JSON), its HTTP status, receipts, events and metrics, and the
/// files of the cache.
@Suite(.awaitsCleanups) struct SecretsTests {
    static let password = "Pw-9f8e7d6c5b"
    static let token = "Tok-1a2b3c4d5e"

    static func cacheFiles(_ root: String) -> String {
        var all = ""
        for relative in FileManager.default.subpaths(atPath: root) ?? [] {
            if let data = FileManager.default.contents(atPath: root + "/" + relative) { all += relative + ": " + String(decoding: data, as: UTF8.self) + "\n" }
        }
        return all
    }

    @Test func aPlantedSecretAppearsInNoOutput() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let remote = origin.url.replacingOccurrences(of: "://", with: "://alice:\(Self.password)@") + "/"
        let cache = dir.path("cache")
        let common = ["--remote", remote, "--header", "X-Api-Key: \(Self.token)", "--preset", dir.path("preset")]
        origin.publish(["index.html": "v1", "app.js": "one"])
        var channels: [(String, String)] = []
        func record(_ name: String, _ run: Binary.Run) {
            channels.append((name + " stdout", run.stdout))
            channels.append((name + " stderr", run.stderr))
        }
        record("sync --json", try Device(cache: cache).run(["sync", "--json"] + common))
        record("status --json", try Device(cache: cache).run(["status", "--json"] + common))
        record("status", try Device(cache: cache).run(["status"] + common))
        origin.inject(.status(500), on: "Routes.json")
        let failed = try Device(cache: cache).run(["sync"] + common)
        #expect(failed.status == 3)
        #expect(failed.stderr.contains("alice:***@"), "the URL is still named, without its password: \(failed.stderr)")
        record("failed sync", failed)
        record("failed sync --json", try Device(cache: cache).run(["sync", "--json"] + common))
        record("malformed header", try Device(cache: cache).run(["sync", "--remote", remote, "--header", "X-Bad Name: \(Self.token)\u{7}"]))
        origin.clearFaults()

        for format in ["text", "json"] {
            let daemonCache = dir.path("daemon-" + format)
            let daemon = try DaemonProcess(common + ["--interval", "3600", "--log-format", format, "--log-level", "debug"], cache: daemonCache)
            let http = try daemon.waitUntilServing()
            let events = try EventStreamClient(port: daemon.port, lastEventID: "0")
            origin.inject(.status(500), on: "Routes.json")
            let accepted = try http.request("POST", "/_cenarius/sync")
            let id = try #require(try accepted.json()["id"] as? String)
            let receipt = try waitForReceipt(http, id)
            #expect(receipt["status"] as? String == "FAILED")
            origin.clearFaults()
            let failure = try events.wait(for: "sync-failed")
            #expect(failure != nil)
            channels.append(("events " + format, failure.map { "\($0.data)" } ?? ""))
            channels.append(("receipt " + format, try http.get("/_cenarius/sync/\(id)").text))
            channels.append(("GET /_cenarius/status " + format, try http.get("/_cenarius/status").text))
            channels.append(("/metrics " + format, try http.get("/metrics").text))
            _ = daemon.terminate()
            channels.append(("daemon log " + format, daemon.stderr))
            channels.append(("cache files " + format, Self.cacheFiles(daemonCache)))
        }
        channels.append(("cache files", Self.cacheFiles(cache)))

        for (name, text) in channels {
            #expect(!text.contains(Self.password), "\(name) shows the password: \(text)")
            #expect(!text.contains(Self.token), "\(name) shows the header value: \(text)")
        }
        #expect(channels.contains { $0.1.contains("alice:***@") }, "the remote is still shown, redacted")
    }
}
