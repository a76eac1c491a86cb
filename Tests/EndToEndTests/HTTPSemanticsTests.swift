import Foundation
import Testing
import TestOrigin

/// What a browser relies on from the daemon's file server, against the real binary: the
/// precondition order, a validator per representation, index and fallback pages, caching
/// headers, and health that tells the truth.
@Suite(.awaitsCleanups) struct HTTPSemanticsTests {
    let page = String(repeating: "<p>Cenarius hot deploy, served by cenariusd.</p>\n", count: 40)

    @Test func preconditionsFollowRFC9110AndEachRepresentationRevalidatesWithItsOwnTag() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": page, "docs/index.html": "docs", "assets/app-1a2b3c4d.js": "hashed()", "app.js": "app()"])
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600",
                                        "--immutable", "assets/*-????????.js", "--fallback", "index.html"], cache: dir.path("cache"))
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let identity = try http.get("/index.html")
        let etag = try #require(identity.headers["etag"])
        let lastModified = try #require(identity.headers["last-modified"])
        #expect(identity.headers["x-content-type-options"] == "nosniff")
        let gzip = try http.get("/index.html", headers: ["Accept-Encoding": "gzip"])
        let gzipETag = try #require(gzip.headers["etag"])
        #expect(gzip.headers["content-encoding"] == "gzip")
        #expect(gzipETag != etag && gzipETag.hasPrefix("W/"), "a validator per representation")

        // (headers, method, expected status), each twice: the first request prepares the
        // reply off the event loop, the second is answered from the prepared one.
        let cases: [([String: String], String, Int)] = [
            (["If-None-Match": etag], "GET", 304),
            (["If-None-Match": etag], "HEAD", 304),
            (["Range": "bytes=100-199", "If-None-Match": etag], "GET", 304),
            (["Range": "bytes=100-199", "If-None-Match": "\"other\""], "GET", 206),
            (["Range": "bytes=100-199"], "GET", 206),
            (["Range": "bytes=100-199"], "HEAD", 200),
            (["Range": "bytes=100-199", "If-Range": etag], "GET", 206),
            (["Range": "bytes=100-199", "If-Range": "\"other\""], "GET", 200),
            (["Range": "bytes=100-199", "If-Range": lastModified], "GET", 206),
            (["If-Match": etag], "GET", 200),
            (["If-Match": "\"other\""], "GET", 412),
            (["If-Match": "\"other\"", "If-None-Match": etag], "GET", 412),
            (["If-Unmodified-Since": "Fri, 01 Jan 2010 00:00:00 GMT"], "GET", 412),
            (["If-Modified-Since": lastModified], "GET", 304),
            (["If-Modified-Since": lastModified, "If-None-Match": "\"other\""], "GET", 200),
            (["Accept-Encoding": "gzip", "If-None-Match": gzipETag], "GET", 304),
            (["Accept-Encoding": "gzip", "If-None-Match": etag], "GET", 200),
            (["If-None-Match": gzipETag], "GET", 200),
            (["Range": "bytes=99999-"], "GET", 416),
        ]
        for (headers, method, expected) in cases {
            for round in 0..<2 {
                let status = try http.request(method, "/index.html", headers: headers).status
                #expect(status == expected, "\(method) \(headers) (round \(round)) → \(status), expected \(expected)")
            }
        }
        let notModified = try http.get("/index.html", headers: ["Accept-Encoding": "gzip", "If-None-Match": gzipETag])
        #expect(notModified.headers["etag"] == gzipETag)

        // Index pages, folders, fallback; caching policy.
        #expect(try http.get("/").text == page)
        #expect(try http.get("/docs/").text == "docs")
        let redirect = try http.get("/docs")
        #expect(redirect.status == 301 && redirect.headers["location"] == "/docs/")
        #expect(try http.get("/settings/profile").text == page, "a single-page app's route")
        #expect(try http.get("/missing.js").status == 404, "a missing file is not answered with the app")
        #expect(try http.get("/_cenarius/nope").status == 404, "never under /_cenarius/")
        #expect(try http.get("/assets/app-1a2b3c4d.js").headers["cache-control"] == "max-age=31536000, immutable")
        #expect(try http.get("/app.js").headers["cache-control"] == "no-cache")
    }

    @Test func healthGoesStaleWithADeadOriginAndComesBack() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--health-max-age", "2"])
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let healthy = try http.get("/health")
        #expect(healthy.status == 200)
        let body = try healthy.json()
        #expect(body["status"] as? String == "ok" && body["entries"] as? Int == 1)
        #expect((body["sync"] as? [String: Any])?["last"] as? [String: Any] != nil)
        let tag = try #require(healthy.headers["etag"])
        #expect(try http.get("/health", headers: ["If-None-Match": tag]).status == 304)
        let status = try http.get("/_cenarius/status")
        #expect(try http.get("/_cenarius/status", headers: ["If-None-Match": try #require(status.headers["etag"])]).status == 304)

        // The origin fails: after --health-max-age without a good sync, 503 with the reason.
        origin.inject(.status(500), on: "Routes.json")
        let failed = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect(failed["reason"] as? String == "request" && failed["desc"] as? String == "REMOTE")
        // Once --health-max-age (2 s) has passed since the last good sync: polled for, not slept for.
        try waitUntil(timeout: 20) { try http.get("/health").status == 503 }
        let stale = try http.get("/health")
        #expect(stale.status == 503)
        let staleBody = try stale.json()
        #expect(staleBody["status"] as? String == "stale")
        let last = (staleBody["sync"] as? [String: Any])?["last"] as? [String: Any]
        #expect(last?["outcome"] as? String == "failed" && last?["desc"] as? String == "REMOTE")
        let text = try Device(in: dir).run(["status"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("last sync:") && text.stdout.contains("failed: REMOTE (3)"), "\(text.stdout)")
        #expect(text.stdout.contains("next sync:"))

        origin.clearFaults()
        _ = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        #expect(try http.get("/health").status == 200)
    }
}
