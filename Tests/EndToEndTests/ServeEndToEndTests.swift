import Foundation
import Testing
import TestOrigin

@Suite(.awaitsCleanups) struct ServeEndToEndTests {
    let page = String(repeating: "<p>Cenarius hot deploy, served by cenariusd.</p>\n", count: 40)

    @Test func daemonServesTheSiteAndAnswersTheControlAPI() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": page, "img/logo.png": "PNGDATA", "js/app.js": "v1()"])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        let http = try daemon.waitUntilServing()

        // GET: the bytes of the table, the route hash as ETag.
        let etag = "\"\(TestOrigin.md5(Array(page.utf8)))\""
        let get = try http.get("/index.html")
        #expect(get.status == 200)
        #expect(get.text == page)
        #expect(get.headers["etag"] == etag)
        #expect(get.headers["cache-control"] == "no-cache")
        #expect(get.headers["content-type"]?.hasPrefix("text/html") == true)

        let head = try http.request("HEAD", "/index.html")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["content-length"] == String(page.utf8.count))

        #expect(try http.get("/index.html", headers: ["If-None-Match": etag]).status == 304)

        let range = try http.get("/index.html", headers: ["Range": "bytes=3-9"])
        #expect(range.status == 206)
        #expect(range.text == String(page.dropFirst(3).prefix(7)))
        #expect(range.headers["content-range"] == "bytes 3-9/\(page.utf8.count)")

        let gzip = try http.get("/index.html", headers: ["Accept-Encoding": "gzip"])
        #expect(gzip.headers["content-encoding"] == "gzip")
        #expect(gzip.body.count < page.utf8.count)
        #expect(try gunzip(gzip.body, in: dir) == page)
        #expect(try http.get("/img/logo.png", headers: ["Accept-Encoding": "gzip"]).headers["content-encoding"] == nil)

        // A remote change is served once a requested sync completes.
        origin.publish(["index.html": page, "img/logo.png": "PNGDATA", "js/app.js": "v2()"])
        let accepted = try http.request("POST", "/_cenarius/sync")
        #expect(accepted.status == 202)
        let id = try #require(try accepted.json()["id"] as? String)
        #expect(try accepted.json()["status"] as? String == "REQUESTED")
        let receipt = try waitForReceipt(http, id)
        #expect(receipt["status"] as? String == "SUCCEED")
        #expect(try http.get("/js/app.js").text == "v2()")

        // An injected fault makes the receipt FAILED with the contract's code.
        origin.inject(.status(500), on: "Routes.json")
        let failing = try http.request("POST", "/_cenarius/sync")
        let failed = try waitForReceipt(http, try #require(try failing.json()["id"] as? String))
        #expect(failed["status"] as? String == "FAILED")
        #expect(failed["error"] as? Int == 3)
        #expect(failed["desc"] as? String == "REMOTE")
        origin.clearFaults()
        // ... while the last good generation keeps being served.
        #expect(try http.get("/js/app.js").text == "v2()")

        // Errors are the JSON envelope.
        let missing = try http.get("/nope.html")
        #expect(missing.status == 404)
        let envelope = try missing.json()
        #expect(envelope["error"] as? Int == 2)
        #expect(envelope["desc"] as? String == "NOT_FOUND")
        #expect(envelope["version"] as? Int == 1)
        #expect(envelope.keys.contains("result"))
        #expect(envelope["id"] != nil && envelope["action"] as? String == "file")

        let resolve = try http.get("/_cenarius/resolve?uri=js/app.js")
        #expect(try resolve.json()["source"] as? String == "cache")
        #expect(try http.get("/_cenarius/status").json()["daemon"] != nil)

        // Prometheus text: every sample line is `name{labels} value`.
        let metrics = try http.get("/metrics")
        #expect(metrics.status == 200)
        let samples = metrics.text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!samples.isEmpty)
        for line in samples {
            let parts = line.split(separator: " ")
            #expect(parts.count == 2 && Double(parts[1]) != nil, "bad metrics line: \(line)")
        }
        #expect(metrics.text.contains("cenarius_syncs_total{outcome=\"committed\"} 2"))
        #expect(metrics.text.contains("cenarius_sync_failures_total{error=\"REMOTE\"} 1"))

        // A second daemon on the same cache says who holds it and exits 5.
        let second = try Device(cache: dir.path("cache")).run(["serve", "--port", "0", "--remote", origin.url])
        #expect(second.status == 5)
        #expect(second.stderr.contains("pid \(daemon.process.processIdentifier)"))

        let stop = daemon.terminate()
        #expect(stop.status == 0)
        #expect(stop.seconds < 5)
    }

    @Test func rawRequestPathsNeverEscapeTheServedFolders() async throws {
        let (_, dir, _) = try await OriginAndDevice.make()
        try dir.write("secret.txt", "TOPSECRET")
        try dir.write("preset/index.html", "home")
        try dir.write("preset/Routes.json", #"[{"uri": "index.html", "hash": "\#(TestOrigin.md5(Array("home".utf8)))"}]"#)
        let daemon = try DaemonProcess(["--preset", dir.path("preset")], cache: dir.path("cache"))
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        #expect(try http.get("/index.html").text == "home")
        let hostile = [
            "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "//secret.txt", "/..%2fsecret.txt",
            "/index.html/../../secret.txt", "/..\\secret.txt", "/%5c..%5csecret.txt", "/%252e%252e/secret.txt",
            "/./index.html", "/index.html%00.txt", "/" + String(repeating: "a/", count: 600) + "x",
        ]
        for target in hostile {
            let response = try http.get(target)
            #expect(response.status == 404 || response.status == 400, "\(target) → \(response.status)")
            #expect(!response.text.contains("TOPSECRET"), "\(target) leaked")
        }
    }

    @Test func developModeServesTheFolderAsItIs() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("dev/index.html", "dev page")
        let daemon = try DaemonProcess(["--develop", "--develop-dir", dir.path("dev")], cache: dir.path("cache"))
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        #expect(try http.get("/index.html").text == "dev page")
        try dir.write("dev/index.html", "edited")
        #expect(try http.get("/index.html").text == "edited")
        #expect(try http.get("/index.html").headers["x-cenarius-source"] == "develop")
    }

    @Test func tokensGuardPostsAndNonLoopbackBinds() async throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let open = try Device(cache: dir.path("c1")).run(["serve", "--bind", "0.0.0.0", "--port", "0"])
        #expect(open.status == 64)
        #expect(open.stderr.contains("--token"))

        let origin = try await TestOrigin()
        Cleanups.add { await origin.shutdown() }
        origin.publish(["a.txt": "a"])
        let daemon = try DaemonProcess(["--remote", origin.url, "--token", "s3cret", "--interval", "3600"], cache: dir.path("cache"))
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let denied = try http.request("POST", "/_cenarius/sync")
        #expect(denied.status == 401)
        #expect(try denied.json()["desc"] as? String == "USAGE")
        #expect(try http.request("POST", "/_cenarius/sync", headers: ["Authorization": "Bearer s3cret"]).status == 202)
    }

    private func gunzip(_ bytes: [UInt8], in dir: Scratch) throws -> String {
        let path = dir.path("body.gz")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try Binary.run(["-dc", path], executable: "/bin/gzip").stdout
    }
}
