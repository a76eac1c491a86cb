import Foundation
import Testing
import TestOrigin

/// Pages of other origins cannot drive the control API (confirm, hold, sync) or read local paths;
/// the daemon's own pages and clients without a browser context (curl, scripts) can.
@Suite(.awaitsCleanups) struct CrossOriginTests {
    @Test func writesFromOtherOriginsAreRefusedAndChangeNothing() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1", "app.js": "one()"])
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600",
                                        "--confirm-timeout", "60", "--allow-origin", "http://app.example:3000"], cache: dir.path("cache"))
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let own = "http://127.0.0.1:\(http.port)"

        for headers in [["Origin": "http://evil.example"], ["Sec-Fetch-Site": "cross-site"], ["Origin": "null"],
                        ["Origin": "http://127.0.0.1:9999"],
                        // DNS rebinding: the page's own name arrives as Host.
                        ["Origin": "http://evil.example:\(http.port)", "Host": "evil.example:\(http.port)"]] {
            for (method, target, body) in [("POST", "/_cenarius/sync", ""), ("POST", "/_cenarius/ready", #"{"generation": 1}"#),
                                           ("POST", "/_cenarius/hold", #"{"ttl": 60}"#), ("DELETE", "/_cenarius/hold/x", ""),
                                           ("GET", "/_cenarius/resolve?uri=app.js", "")] {
                let refused = try http.request(method, target, headers: headers.merging(["Content-Type": "text/plain"]) { a, _ in a }, body: body)
                // A rebinding Host is refused before its Origin is looked at (421).
                #expect(refused.status == (headers["Host"] == nil ? 403 : 421), "\(method) \(target) \(headers) → \(refused.status)")
                #expect(try refused.json()["desc"] as? String == "USAGE")
            }
        }
        let metrics = try http.get("/metrics").text
        #expect(metrics.contains(#"cenarius_sync_runs_total{reason="request"} 0"#), "no refused request started a sync")
        #expect((try http.get("/_cenarius/status").json()["cache"] as? [String: Any])?["holds"] as? [Any] != nil)
        #expect(((try http.get("/_cenarius/status").json()["cache"] as? [String: Any])?["holds"] as? [Any])?.isEmpty == true)

        // The daemon's own pages, scripts and curl, and the allowed origin work.
        #expect(try http.request("POST", "/_cenarius/sync", headers: ["Origin": own, "Sec-Fetch-Site": "same-origin"]).status == 202)
        #expect(try http.request("POST", "/_cenarius/sync", headers: ["Origin": "http://localhost:\(http.port)", "Host": "localhost:\(http.port)"]).status == 202)
        #expect(try http.request("POST", "/_cenarius/sync").status == 202)
        let allowed = try http.request("POST", "/_cenarius/sync", headers: ["Origin": "http://app.example:3000", "Sec-Fetch-Site": "cross-site"])
        #expect(allowed.status == 202)
        #expect(allowed.headers["access-control-allow-origin"] == "http://app.example:3000")
        #expect(try http.request("POST", "/_cenarius/ready", headers: ["Origin": own], body: #"{"generation": 1}"#).status == 200)

        // Preflights: CORS only for the allowed origin.
        let preflight = try http.request("OPTIONS", "/_cenarius/ready", headers: ["Origin": "http://app.example:3000", "Access-Control-Request-Method": "POST"])
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-origin"] == "http://app.example:3000")
        let other = try http.request("OPTIONS", "/_cenarius/ready", headers: ["Origin": "http://evil.example", "Access-Control-Request-Method": "POST"])
        #expect(other.status == 204)
        #expect(other.headers["access-control-allow-origin"] == nil)
    }
}
