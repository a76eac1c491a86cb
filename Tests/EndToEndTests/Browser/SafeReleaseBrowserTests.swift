import Foundation
import Testing
import TestOrigin

/// The bundled sample site in a real browser (headless Chromium) against the real daemon: it
/// hears of a new release over the event stream, reloads, confirms what it loaded; and a release
/// that never confirms is rolled back by the daemon, the page following it back (G9).
@Suite(.serialized, .awaitsCleanups) struct SafeReleaseBrowserTests {
    static let www = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("www").path

    /// The bundled www/ as published files, with `app.js` edited by `edit`.
    static func site(_ edit: (String) -> String = { $0 }) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for uri in ["index.html", "css/style.css", "img/logo.png", "js/cenarius.js", "js/app.js"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: www + "/" + uri))
            files[uri] = uri == "js/app.js" ? Array(edit(String(decoding: data, as: UTF8.self)).utf8) : Array(data)
        }
        return files
    }

    static func release(_ version: String, confirms: Bool = true) -> (String) -> String {
        { app in
            var app = app.replacingOccurrences(of: #"var release = "1.0.0""#, with: "var release = \"\(version)\"")
            if !confirms { app = app.replacingOccurrences(of: "  Cenarius.ready()", with: "  Promise.resolve({status: 'not confirming'})") }
            return app
        }
    }

    @Test func thePageFollowsReleasesConfirmsThemAndIsRolledBackWithABadOne() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        _ = origin.publish(try Self.site())
        // 20 s: each trial must outlast the page hearing of it, a click and a browser reload,
        // which on a loaded machine take seconds; the rollback below waits for the whole of it.
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--confirm-timeout", "20"])
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let browser = try Browser()
        let page = "http://127.0.0.1:\(http.port)/index.html"
        try browser.navigate(page)
        // The page reads the generation it was loaded from (Server-Timing) and confirms it.
        try browser.waitFor("document.getElementById('trial').textContent === 'confirmed'")
        #expect(try browser.evaluate("Cenarius.generation()") as? Int == 1)
        try browser.screenshot("safe-release-1-loaded")

        // A good release: the open page hears `committed`, offers it, reloads and confirms it.
        _ = origin.publish(try Self.site(Self.release("1.0.1")))
        #expect(try http.request("POST", "/_cenarius/sync").status == 202)
        try browser.waitFor("!document.getElementById('update').hidden")
        #expect((try browser.evaluate("document.getElementById('update-text').textContent") as? String)?.contains("generation 2") == true)
        try browser.screenshot("safe-release-2-offered")
        _ = try browser.evaluate("document.getElementById('reload').click()")
        try browser.waitFor("document.getElementById('release').textContent.startsWith('1.0.1') && document.getElementById('trial').textContent === 'confirmed'")
        let confirmed = try http.get("/_cenarius/status").json()["cache"] as? [String: Any]
        #expect(confirmed?["confirmedGeneration"] as? Int == 2)
        #expect(confirmed?["trial"] as? Bool == false)
        try browser.screenshot("safe-release-3-confirmed")

        // A release that never confirms: the page runs it, nothing confirms, the daemon rolls it
        // back at the deadline, and the page, told by the event stream, goes back to 1.0.1.
        _ = origin.publish(try Self.site(Self.release("1.0.2", confirms: false)))
        #expect(try http.request("POST", "/_cenarius/sync").status == 202)
        try browser.waitFor("!document.getElementById('update').hidden")
        _ = try browser.evaluate("document.getElementById('reload').click()")
        try browser.waitFor("document.getElementById('release').textContent.startsWith('1.0.2')")
        #expect(try browser.evaluate("Cenarius.generation()") as? Int == 3)
        let trial = try http.get("/_cenarius/status").json()["cache"] as? [String: Any]
        #expect(trial?["generation"] as? Int == 3 && trial?["trial"] as? Bool == true, "the page loaded 1.0.2 while it was on trial")
        let deadline = try #require(trial?["trialDeadline"] as? Double)
        try browser.screenshot("safe-release-4-unconfirmed")
        try browser.waitFor("document.getElementById('release').textContent.startsWith('1.0.1') && Cenarius.generation() === 2", timeout: 60)
        let status = try http.get("/_cenarius/status").json()["cache"] as? [String: Any]
        #expect(status?["generation"] as? Int == 2)
        let rollback = try #require(status?["lastRollback"] as? [String: Any])
        #expect(rollback["reason"] as? String == "timeout" && rollback["from"] as? Int == 3)
        #expect(try #require(rollback["at"] as? Double) >= deadline, "not before the deadline")
        #expect(try http.get("/js/app.js").text.contains("1.0.1"))
        try browser.screenshot("safe-release-5-rolled-back")
    }

    /// The count of requests the daemon has answered, from its request-duration histogram in /metrics.
    static func requestsAnswered(_ http: RawHTTP) throws -> Int {
        let line = try http.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("cenarius_http_request_duration_seconds_count") }
        return Int(try #require(line?.split(separator: " ").last)) ?? -1
    }

    @Test func aPageOfAnotherOriginCannotSyncConfirmOrHold() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        _ = origin.publish(try Self.site())
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--confirm-timeout", "60"])
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        _ = origin.publish(try Self.site(Self.release("1.0.1")))
        let receipt = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect((receipt["release"] as? [String: Any])?["state"] as? String == "trial")

        // A page on the test origin's port tries every write, as `no-cors` requests do.
        let daemonURL = "http://127.0.0.1:\(http.port)"
        origin.put("evil.html", """
            <!doctype html><title>evil</title><script>
            const opts = (method, body) => ({method, mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body});
            Promise.allSettled([
              fetch('\(daemonURL)/_cenarius/sync', opts('POST', '')),
              fetch('\(daemonURL)/_cenarius/ready', opts('POST', '{"generation": 2}')),
              fetch('\(daemonURL)/_cenarius/hold', opts('POST', '{"ttl": 600}')),
            ]).then(() => { document.title = 'done'; });
            </script>
            """)
        // The daemon counts every request it answers: the page's three must be among them, so that the
        // refusals below are refusals, not requests the browser never sent.
        let answeredBefore = try Self.requestsAnswered(http)
        let browser = try Browser()
        try browser.navigate(origin.url + "/evil.html")
        try browser.waitFor("document.title === 'done'")
        try browser.screenshot("cross-origin-page")
        #expect(try Self.requestsAnswered(http) - answeredBefore >= 3, "the page's requests reached the daemon")
        let status = try http.get("/_cenarius/status").json()["cache"] as? [String: Any]
        #expect(status?["trial"] as? Bool == true, "still on trial: the other page could not confirm it")
        #expect((status?["holds"] as? [Any])?.isEmpty == true)
        #expect(try http.get("/metrics").text.contains(#"cenarius_sync_runs_total{reason="request"} 1"#), "only the test's own request synced")
    }
}
