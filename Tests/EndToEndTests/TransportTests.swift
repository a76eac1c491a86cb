import Foundation
import Testing
import TestOrigin

/// Transport as a user meets it: HTTPS with a private CA, TLS errors that say what is wrong,
/// client certificates, headers for private origins, mirrors and TLS session reuse (CONTRACT, "Transport").
@Suite(.serialized, .awaitsCleanups) struct TransportTests {
    /// Publishes a two-file site with `cenariusd routes` into `folder`.
    private func publish(_ folder: String, version: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "<h1>\(version)</h1>".write(toFile: folder + "/index.html", atomically: true, encoding: .utf8)
        try "go('\(version)')".write(toFile: folder + "/app.js", atomically: true, encoding: .utf8)
        let routes = try Binary.run(["routes", folder])
        #expect(routes.status == 0, "\(routes.stderr)")
    }

    @Test func httpsWithAPrivateCAAndTheTLSFailuresPeopleMeet() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        try publish(origin.folder("site"), version: "v1")
        let host = "host 127.0.0.1:"

        let trusted = try Device(cache: dir.path("c1")).run(["sync", "--json", "--remote", origin.url(.good), "--cacert", origin.caFile])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try trusted.json()["outcome"] as? String == "committed")

        let unknown = try Device(cache: dir.path("c2")).run(["sync", "--remote", origin.url(.good)])
        #expect(unknown.status == 3)
        #expect(unknown.stderr.contains("unknown certificate authority") && unknown.stderr.contains("--cacert"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains(host + "\(origin.ports[.good]!)"), "\(unknown.stderr)")
        // A first sync that failed leaves no cache behind but the record of its failure, for `why`.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("c2")) == ["last-sync.json"])

        let expired = try Device(cache: dir.path("c3")).run(["sync", "--remote", origin.url(.expired), "--cacert", origin.caFile])
        #expect(expired.status == 3)
        #expect(expired.stderr.contains("certificate has expired"), "\(expired.stderr)")

        let wrongName = try Device(cache: dir.path("c4")).run(["sync", "--remote", origin.url(.wrongName), "--cacert", origin.caFile])
        #expect(wrongName.status == 3)
        #expect(wrongName.stderr.contains("does not name 127.0.0.1"), "\(wrongName.stderr)")

        let missingCA = try Device(cache: dir.path("c5")).run(["sync", "--remote", origin.url(.good), "--cacert", dir.path("nothing.pem")])
        #expect(missingCA.status == 64, "\(missingCA.stderr)")
    }

    /// G7 over https: HTTP/2 is negotiated (as nginx logs it, not assumed) and the files share at most
    /// `--connections` connections.
    @Test func httpsNegotiatesHTTP2WithinTheConnectionCap() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        let site = origin.folder("site")
        try FileManager.default.createDirectory(atPath: site + "/js", withIntermediateDirectories: true)
        for i in 0..<40 {
            try String(repeating: "file \(i);", count: 2000).write(toFile: site + "/js/f\(i).js", atomically: true, encoding: .utf8)
        }
        #expect(try Binary.run(["routes", site]).status == 0)
        let sync = try Device(in: dir).sync(["--remote", origin.url(.good), "--cacert", origin.caFile, "--connections", "2"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let files = origin.requests(endingWith: ".js").filter { $0.status == 200 }
        #expect(files.count == 40)
        #expect(files.allSatisfy { $0.protocol == "HTTP/2.0" }, "\(Set(files.map(\.protocol)))")
        #expect((1...2).contains(Set(files.map(\.connection)).count), "\(Set(files.map(\.connection)))")
    }

    @Test func clientCertificatesIdentifyTheDevice() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        try publish(origin.folder("site"), version: "v1")
        let common = ["--remote", origin.url(.mutual), "--cacert", origin.caFile]

        let anonymous = try Device(cache: dir.path("c1")).run(["sync"] + common)
        #expect(anonymous.status == 3)
        #expect(anonymous.stderr.contains("requires a client certificate"), "\(anonymous.stderr)")

        let identified = try Device(cache: dir.path("c2")).run(["sync", "--json"] + common + ["--client-cert", origin.clientCertificate,
                                                                                           "--client-key", origin.clientKey])
        #expect(identified.status == 0, "\(identified.stderr)")
        #expect(try identified.json()["downloadedFiles"] as? Int == 2)

        // A key that does not belong to the certificate: refused before any request, and said so.
        let mismatched = try Device(cache: dir.path("c3")).sync(common + ["--client-cert", origin.clientCertificate, "--client-key", origin.folder("good.key")])
        #expect(mismatched.status == 3)
        #expect(mismatched.stderr.contains("client certificate"), "\(mismatched.stderr)")
    }

    @Test func aHeaderOpensAPrivateOriginAndSeedsUseItToo() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        try publish(origin.folder("private"), version: "v1")
        let common = ["--remote", origin.url(.good, "private"), "--cacert", origin.caFile]

        let refused = try Device(cache: dir.path("c1")).run(["sync"] + common)
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("HTTP 401"), "\(refused.stderr)")

        let sync = try Device(cache: dir.path("c2")).run(["sync"] + common + ["--header", "Authorization: Bearer s3cret"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let seed = try Binary.run(["seed"] + common + ["--header", "Authorization: Bearer s3cret", "--preset", dir.path("preset")])
        #expect(seed.status == 0, "\(seed.stderr)")
        #expect(FileManager.default.contents(atPath: dir.path("preset/app.js")) == Data("go('v1')".utf8))
        let authorized = origin.requests(endingWith: "app.js").filter { $0.status == 200 }
        #expect(authorized.count == 2 && authorized.allSatisfy { $0.authorization == "Bearer s3cret" })

        let config = dir.path("config.json")
        try #"{"remote": "\#(origin.url(.good, "private"))", "cacert": "\#(origin.caFile)", "header": ["Authorization: Bearer s3cret"]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let configured = try Device(cache: dir.path("c3")).run(["sync", "--config", config])
        #expect(configured.status == 0, "\(configured.stderr)")
        try #"{"remote": "\#(origin.url(.good, "private"))", "caFile": "\#(origin.caFile)"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let typo = try Device(cache: dir.path("c4")).run(["sync", "--config", config])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown key \"caFile\""), "\(typo.stderr)")
    }

    @Test func httpsGoesThroughTheUsualProxyVariables() throws {
        let origin = try TLSOrigin()
        let proxy = try ConnectProxy()
        let dir = try Scratch()
        defer { proxy.stop(); dir.remove() }
        try publish(origin.folder("private"), version: "v1")
        let common = ["--remote", origin.url(.good, "private"), "--cacert", origin.caFile, "--header", "Authorization: Bearer s3cret"]
        let viaProxy = ["https_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": ""]

        let sync = try Device(cache: dir.path("c1")).run(["sync", "--json"] + common, environment: viaProxy)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.json()["downloadedFiles"] as? Int == 2)
        let tunnels = proxy.requests
        #expect(!tunnels.isEmpty && tunnels.allSatisfy { $0.hasPrefix("CONNECT 127.0.0.1:\(origin.ports[.good]!) ") }, "\(tunnels)")
        // The origin's credentials travel inside the tunnel only: the proxy never sees them.
        #expect(!tunnels.joined().contains("s3cret"), "\(tunnels)")

        // no_proxy names the hosts reached directly.
        let direct = try Device(cache: dir.path("c2")).sync(common, environment: viaProxy.merging(["no_proxy": "127.0.0.1"]) { $1 })
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(proxy.requests.count == tunnels.count)

        // A proxy that wants credentials says so, at once (no retry brings them).
        proxy.refuse(with: 407)
        let refused = try Device(cache: dir.path("c3")).run(["sync"] + common, environment: viaProxy)
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("proxy") && refused.stderr.contains("407"), "\(refused.stderr)")
        #expect(proxy.requests.count == tunnels.count + 1, "\(proxy.requests)")

        // A proxy that is down is a remote error that names where it was looked for.
        proxy.stop()
        let down = try Device(cache: dir.path("c4")).run(["sync"] + common, environment: viaProxy)
        #expect(down.status == 3)
        #expect(down.stderr.contains("port \(proxy.port)"), "\(down.stderr)")
    }

    @Test func theDaemonKeepsItsConnectionFromPollToPoll() throws {
        let (origin, dir) = try TLSOrigin.withScratch()
        try publish(origin.folder("site"), version: "v1")
        let daemon = try DaemonProcess(["--remote", origin.url(.good), "--cacert", origin.caFile, "--preset", dir.path("preset")],
                                       cache: dir.path("cache"))
        let http = try daemon.waitUntilServing()
        for _ in 0..<3 {
            let accepted = try http.request("POST", "/_cenarius/sync")
            let receipt = try waitForReceipt(http, try #require(try accepted.json()["id"] as? String))
            #expect(receipt["status"] as? String == "SUCCEED")
        }
        _ = daemon.terminate()
        let polls = origin.requests(endingWith: "Routes.head")
        #expect(polls.count >= 4, "\(polls)")
        // The first poll makes a full handshake; the later ones, within nginx's keepalive, go
        // over the same connection (a new connection would resume the session: PollConnectionTests).
        #expect(polls.allSatisfy { $0.connection == polls[0].connection }, "\(polls)")
    }

    @Test func headersStayWithTheRemotesHostAcrossRedirects() async throws {
        let remote = try await TestOrigin()
        let elsewhere = try await TestOrigin()
        let dir = try Scratch()
        Cleanups.add { await remote.shutdown(); await elsewhere.shutdown(); dir.remove() }
        _ = remote.publish(["index.html": "<h1>v1</h1>", "app.js": "go()"])
        elsewhere.put("app.js", "go()")
        remote.inject(.redirect(elsewhere.url + "/app.js"), on: "app.js")

        let sync = try Device(cache: dir.path("cache")).run(["sync", "--remote", remote.url, "--header", "X-Device-Token: t0ken"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(remote.requests(for: "Routes.json").first?.headers["x-device-token"] == "t0ken")
        #expect(remote.requests(for: "app.js").first?.headers["x-device-token"] == "t0ken")
        let followed = try #require(elsewhere.requests(for: "app.js").first)
        #expect(followed.headers["x-device-token"] == nil)
    }

    @Test func mirrorsGiveWhatTheFirstRemoteCannot() async throws {
        let first = try await TestOrigin()
        let second = try await TestOrigin()
        let dir = try Scratch()
        Cleanups.add { await first.shutdown(); await second.shutdown(); dir.remove() }
        let common = ["--remote", first.url, "--remote", second.url] + Device(in: dir).flags
        for origin in [first, second] { _ = origin.publish(["index.html": "<h1>v1</h1>", "app.js": "one()"]) }

        // The first remote cannot give the table: it comes from the second, and so do the files.
        first.inject(.status(500), on: "Routes.json")
        let fromSecond = try Binary.run(["sync", "--json"] + common)
        #expect(fromSecond.status == 0, "\(fromSecond.stderr)")
        #expect(try fromSecond.json()["downloadedFiles"] as? Int == 2)
        #expect(second.requests(for: "app.js").count == 1)

        // The first gives the table but a corrupt file: that file comes from the second.
        first.clearFaults()
        first.resetRequests()
        second.resetRequests()
        for origin in [first, second] { _ = origin.publish(["index.html": "<h1>v2</h1>", "app.js": "two()"]) }
        first.inject(.corrupt, on: "app.js")
        let mixed = try Binary.run(["sync", "--json"] + common)
        #expect(mixed.status == 0, "\(mixed.stderr)")
        #expect(second.requests(for: "Routes.json").isEmpty)
        #expect(second.requests(for: "app.js").count == 1)
        #expect(second.requests(for: "index.html").isEmpty)
        let resolved = try Binary.run(["resolve", "app.js"] + common)
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8) == "two()")

        // No mirror has it: the error names every one.
        for origin in [first, second] { origin.inject(.status(503), on: "Routes.json") }
        let none = try Binary.run(["sync"] + common)
        #expect(none.status == 3)
        #expect(none.stderr.contains("every mirror failed") && none.stderr.contains(first.url) && none.stderr.contains(second.url), "\(none.stderr)")
    }

    @Test func theFirstSyncWaitsAJitteredMomentOnlyWhenATableIsInForce() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        _ = origin.publish(["index.html": "<h1>v1</h1>"])

        // Nothing in force: the first sync cannot wait.
        let fresh = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("none"), "--start-jitter", "3600"], cache: dir.path("c1"))
        _ = try fresh.waitUntilServing()
        try waitUntil { !origin.requests(for: "Routes.json").isEmpty }
        _ = fresh.terminate()

        // A table in force (this cache's): the first poll waits, and a request still wakes it.
        origin.resetRequests()
        let started = Date().timeIntervalSince1970
        let rebooted = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("none"), "--start-jitter", "3600"], cache: dir.path("c1"))
        let http = try rebooted.waitUntilServing()
        let status = try http.get("/_cenarius/status").json()
        let next = try #require((status["sync"] as? [String: Any])?["nextSyncAt"] as? Double, "\(status)")
        // A real wait: at least 2 s after the start (a uniform moment in an hour falls below that once in 1,800 runs).
        #expect(next > started + 2 && next < Date().timeIntervalSince1970 + 3601, "next sync at \(next - started) s after the start")
        // Watched for a second, but never past the moment itself: a slow start on a loaded machine
        // must not make a poll that came on time look early.
        let watched = min(Date().timeIntervalSince1970 + 1, next - 0.2)
        while Date().timeIntervalSince1970 < watched { usleep(50_000) }
        if Date().timeIntervalSince1970 < next { #expect(origin.requests(for: "Routes.json").isEmpty) }
        let accepted = try http.request("POST", "/_cenarius/sync")
        let receipt = try waitForReceipt(http, try #require(try accepted.json()["id"] as? String))
        #expect(receipt["status"] as? String == "SUCCEED")
        #expect(origin.requests(for: "Routes.json").count == 1)
        _ = rebooted.terminate()
    }

    @Test func maxRateCapsTheDownloadAcrossItsTransfers() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        // Four files of 512 KiB at 512 KiB/s in all: four seconds however many connections (less
        // the quarter second's burst the gate allows at the start).
        var files: [String: [UInt8]] = [:]
        for i in 0..<4 { files["f\(i).bin"] = (0..<(512 << 10)).map { UInt8(truncatingIfNeeded: $0 &* (i + 7)) } }
        _ = origin.publish(files)
        let started = Date()
        let capped = try Device(cache: dir.path("c1")).run(["sync", "--remote", origin.url, "--max-rate", "524288"])
        let seconds = Date().timeIntervalSince(started)
        #expect(capped.status == 0, "\(capped.stderr)")
        #expect(seconds > 3.2, "2 MiB at 512 KiB/s took \(seconds) s")
        let refused = try Device(cache: dir.path("c2")).run(["sync", "--remote", origin.url, "--max-rate", "fast"])
        #expect(refused.status == 64)
    }
}
