import Foundation
import RouteSync
import Testing
import TestOrigin

/// Trust that lasts (G8, continued): versions without local state, expiry, several keys and
/// thresholds, key rotation, and `seed` writing the sidecar it verified, all with the binary's own
/// `keygen` and `routes`. The device's clock is moved by the test hook `CENARIUS_CLOCK_OFFSET`.
@Suite(.awaitsCleanups) struct TrustEndToEndTests {
    /// Two CI runners with fresh clones (two folders, no sidecar between them) signing within the
    /// same second: with versions in seconds the second release was refused as a replay.
    @Test func twoPublishersThatShareNothingBothGetTheirReleasesAdopted() async throws {
        let p = try await Publisher.make()
        try p.dir.keygen("release")
        let device = p.device("cache", keys: ["release"])
        try p.publish("one()", build: "runner-a", ["--sign-key", "@release.key"])
        #expect(try Binary.run(["sync"] + device).status == 0)
        try p.publish("two()", build: "runner-b", ["--sign-key", "@release.key"])
        let second = try Binary.run(["sync"] + device)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try p.app(device) == "two()")
        let a = try p.sidecar("runner-a").version, b = try p.sidecar("runner-b").version
        #expect(b > a)
        // Milliseconds: within a second of now.
        #expect(abs(Double(b) / 1000 - Date().timeIntervalSince1970) < 60)
    }

    @Test func seedWritesTheSidecarItVerified() async throws {
        let p = try await Publisher.make()
        try p.dir.keygen("release")
        try p.publish("one()", ["--sign-key", "@release.key"])
        p.origin.resetRequests()
        let seed = try Binary.run(["seed", "--remote", p.origin.url, "--preset", p.dir.path("seeded"), "--public-key", p.dir.path("release.pub")])
        #expect(seed.status == 0, "\(seed.stderr)")
        // One fetch: a second one could bring a sidecar that was never verified with this table.
        #expect(p.origin.requests(for: "Routes.json.sig").count == 1)
        #expect(p.dir.read("seeded/Routes.json.sig") == p.dir.read("site/Routes.json.sig"))
        // A release manifest under the same signature is checked too, and lands beside the table.
        try p.publish("two()", ["--sign-key", "@release.key", "--release", "r2"])
        let withManifest = try Binary.run(["seed", "--remote", p.origin.url, "--preset", p.dir.path("seeded"), "--public-key", p.dir.path("release.pub")])
        #expect(withManifest.status == 0, "\(withManifest.stderr)")
        #expect(p.dir.read("seeded/Routes.json.release") == p.dir.read("site/Routes.json.release"))
        #expect(p.dir.read("seeded/Routes.json.sig") == p.dir.read("site/Routes.json.sig"))
        p.origin.put("Routes.json.release", #"{"release": "r2", "rollout": {"start": 0, "duration": 0, "halted": true}}"#)
        let tampered = try Binary.run(["seed", "--remote", p.origin.url, "--preset", p.dir.path("seeded-2"), "--public-key", p.dir.path("release.pub")])
        #expect(tampered.status == 4)
        #expect(tampered.stderr.contains("does not match its signature"), "\(tampered.stderr)")
    }

    @Test func aThresholdNeedsSignaturesFromDistinctTrustedKeys() async throws {
        let p = try await Publisher.make()
        try p.dir.keygen("alice")
        try p.dir.keygen("bob")
        let device = p.device("cache", keys: ["alice", "bob"], ["--signatures-required", "2"])
        try p.publish("one()", ["--sign-key", "@alice.key"])
        let version = try p.sidecar().version
        let short = try Binary.run(["sync"] + device)
        #expect(short.status == 4)
        #expect(short.stderr.contains("1 valid signature from trusted keys, 2 required"), "\(short.stderr)")
        // The second signer signs the same table: a signature added, the version unchanged.
        let added = try p.publish(nil, ["--sign-key", "@bob.key"])
        #expect(added.stdout.contains("2 signatures"), "\(added.stdout)")
        #expect(try p.sidecar().version == version)
        #expect(try p.sidecar().signatures.count == 2)
        let both = try Binary.run(["sync"] + device)
        #expect(both.status == 0, "\(both.stderr)")
        #expect(try p.app(device) == "one()")
        // Each key alone is trusted without a threshold; more required than keys is a usage error.
        #expect(try Binary.run(["sync"] + p.device("cache-b", keys: ["bob", "alice"])).status == 0)
        #expect(try Binary.run(["sync"] + p.device("cache-c", keys: ["alice", "bob"], ["--signatures-required", "3"])).status == 64)
    }

    @Test func expiredTablesAreRefusedAndAnExpiredTableInForceIsVisible() async throws {
        let p = try await Publisher.make()
        try p.dir.keygen("release")
        let device = p.device("cache", keys: ["release"])
        let hours = ["CENARIUS_CLOCK_OFFSET": "7200"]
        #expect(try Binary.run(["routes", p.dir.path("site"), "--sign-key", p.dir.path("release.key"), "--expires", "5x"]).status == 64)
        let signed = try p.publish("one()", ["--sign-key", "@release.key", "--expires", "1h"])
        #expect(signed.stdout.contains("expires"), "\(signed.stdout)")
        let expires = try #require(try p.sidecar().expires)
        #expect(abs(Double(expires) - Date().timeIntervalSince1970 - 3600) < 60)
        // Two hours later, nobody adopts it.
        let late = try Binary.run(["sync"] + p.device("cache-late", keys: ["release"]), environment: hours)
        #expect(late.status == 4)
        #expect(late.stderr.contains("expired at"), "\(late.stderr)")
        #expect(try Binary.run(["sync"] + device).status == 0)

        // The table in force expires, the remote offers nothing newer: still served, and said.
        let status = try Binary.run(["status", "--json"] + device, environment: hours).json()
        let signature = try #require(status["signature"] as? [String: Any])
        #expect(signature["expired"] as? Bool == true)
        #expect(signature["expires"] as? Double == Double(expires))
        #expect(try Binary.run(["status"] + device, environment: hours).stdout.contains("EXPIRED"))
        let frozen = try Binary.run(["sync"] + device, environment: hours)
        #expect(frozen.status == 0)
        #expect(frozen.stderr.contains("expired at"), "\(frozen.stderr)")
        #expect(try p.app(device) == "one()")

        // The daemon: /health says "expired" (200, or 503 with --fail-when-expired), the metric
        // says when, an event says so, and a newer but expired table is a sync-failed event.
        let serve = ["--remote", p.origin.url, "--preset", p.dir.path("preset"), "--public-key", p.dir.path("release.pub"), "--interval", "3600"]
        do {
            let daemon = try DaemonProcess(serve, cache: p.dir.path("cache"), environment: hours)
            let http = try daemon.waitUntilServing()
            let health = try http.get("/health")
            #expect(health.status == 200)
            #expect(String(decoding: health.body, as: UTF8.self).contains(#""status":"expired""#))
            let metrics = String(decoding: try http.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("cenarius_table_expires_timestamp_seconds \(expires)"), "\(metrics)")
            let events = try EventStreamClient(port: http.port, lastEventID: "0")
            let event = try #require(try events.wait(for: "table-expired"))
            #expect(event.int("expires") == Int(expires))
            _ = daemon.terminate()
        }
        try p.publish("two()", ["--sign-key", "@release.key", "--expires", "1h"])
        do {
            let daemon = try DaemonProcess(serve + ["--fail-when-expired"], cache: p.dir.path("cache"), environment: hours)
            let http = try daemon.waitUntilServing(healthy: false)
            let events = try EventStreamClient(port: http.port, lastEventID: "0")
            let failed = try #require(try events.wait(for: "sync-failed"))
            #expect(failed.string("message")?.contains("expired at") == true)
            let health = try http.get("/health")
            #expect(health.status == 503)
            #expect(String(decoding: health.body, as: UTF8.self).contains(#""status":"expired""#))
            _ = daemon.terminate()
        }
        #expect(try p.app(device) == "one()")

        // Signed in the device's future (its clock two hours behind): adopted, and status says the clock looks wrong.
        let behind = ["CENARIUS_CLOCK_OFFSET": "-7200"]
        #expect(try Binary.run(["sync"] + device, environment: behind).status == 0)
        #expect(try p.app(device) == "two()")
        let clock = try #require(try Binary.run(["status", "--json"] + device, environment: behind).json()["signature"] as? [String: Any])
        #expect((clock["clock"] as? String)?.contains("clock looks wrong") == true)

        // Two hours on, two() has expired; the same table re-signed with a later expiry (a
        // scheduled routes --expires) is picked up though the table did not change (304).
        #expect(try Binary.run(["sync"] + device, environment: hours).stderr.contains("expired at"))
        try p.publish(nil, ["--sign-key", "@release.key", "--expires", "3h"])
        let refreshed = try Binary.run(["sync", "--json"] + device, environment: hours)
        #expect(try refreshed.json()["outcome"] as? String == "not-modified")
        #expect(!refreshed.stderr.contains("expired at"), "\(refreshed.stderr)")
        let renewed = try #require(try Binary.run(["status", "--json"] + device, environment: hours).json()["signature"] as? [String: Any])
        #expect(renewed["expired"] as? Bool == false)
        #expect((renewed["version"] as? NSNumber)?.int64Value == (try p.sidecar().version))
    }

    @Test func aRotationMovesTheFleetToTheNewKeyAndAChainIsFollowed() async throws {
        let p = try await Publisher.make()
        try p.dir.keygen("k1")
        let device = p.device("cache", keys: ["k1"])
        try p.publish("one()", ["--sign-key", "@k1.key"])
        #expect(try Binary.run(["sync"] + device).status == 0)

        try p.dir.keygen("k2", ["--rotate-from", p.dir.path("k1.key")])
        #expect(p.dir.read("k2.rotation") != nil)
        // Signed by the new key without the statement: a stranger's signature.
        try p.publish("two()", ["--sign-key", "@k2.key"])
        #expect(try Binary.run(["sync"] + device).status == 4)
        try p.publish("two()", ["--sign-key", "@k2.key", "--rotation", "@k2.rotation"])
        let rotated = try Binary.run(["sync"] + device)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try p.app(device) == "two()")
        let keys = try #require(try Binary.run(["status", "--json"] + device).json()["signature"] as? [String: Any])
        let k1 = try p.sidecarKeyID("k1"), k2 = try p.sidecarKeyID("k2")
        #expect(keys["trustedKeys"] as? [String] == [k2])
        #expect(keys["retiredKeys"] as? [String] == [k1])

        // From then on only the new key: the old one is refused though the device still names it.
        try p.publish("three()", ["--sign-key", "@k1.key"])
        let old = try Binary.run(["sync"] + device)
        #expect(old.status == 4)
        #expect(old.stderr.contains("bad signature"), "\(old.stderr)")
        #expect(old.stderr.contains("which this device retired"), "\(old.stderr)")

        // A chain, oldest first: followed from where each device is, and from the start by a new one.
        try p.dir.keygen("k3", ["--rotate-from", p.dir.path("k2.key")])
        // Statements out of order are the publisher's mistake, caught before publishing.
        #expect(try Binary.run(["routes", p.dir.path("site"), "--sign-key", p.dir.path("k3.key"),
                                "--rotation", p.dir.path("k3.rotation"), "--rotation", p.dir.path("k2.rotation")]).status == 64)
        try p.publish("four()", ["--sign-key", "@k3.key", "--rotation", "@k2.rotation", "--rotation", "@k3.rotation"])
        #expect(try Binary.run(["sync"] + device).status == 0)
        #expect(try p.app(device) == "four()")
        let fresh = p.device("cache-fresh", keys: ["k1"])
        #expect(try Binary.run(["sync"] + fresh).status == 0)
        #expect(try p.app(fresh) == "four()")

        // A statement from a key the device never trusted is refused.
        try p.dir.keygen("mallory")
        try p.dir.keygen("mallory-2", ["--rotate-from", p.dir.path("mallory.key")])
        try p.publish("five()", ["--sign-key", "@mallory-2.key", "--rotation", "@mallory-2.rotation"])
        let forged = try Binary.run(["sync"] + device)
        #expect(forged.status == 4)
        #expect(forged.stderr.contains("not signed by a key this device trusts"), "\(forged.stderr)")
        #expect(try p.app(device) == "four()")
    }
}

/// What this suite asks of a publisher beyond publishing: its signature sidecar, a device's flags
/// trusting some of its keys, and what a device serves.
extension Publisher {
    func sidecar(_ site: String = "site") throws -> TableSignature {
        try TableSignature.parse(Array(try #require(dir.read(site + "/Routes.json.sig")).utf8), source: "sig")
    }

    func device(_ cache: String, keys: [String], _ extra: [String] = []) -> [String] {
        ["--remote", origin.url] + Device(cache: dir.path(cache), preset: dir.path("preset")).flags
            + keys.flatMap { ["--public-key", dir.path($0 + ".pub")] } + extra
    }

    func app(_ common: [String]) throws -> String {
        let path = try Binary.run(["resolve", "app.js", "--offline"] + common).stdout.trimmingCharacters(in: .newlines)
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? "?"
    }

    /// The key id `keygen` printed for `NAME`: the first 16 hex digits of SHA-256 of the public key.
    func sidecarKeyID(_ name: String) throws -> String {
        let text = try #require(dir.read(name + ".pub")).trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = try #require(Base64.decode(text))
        return String(TestOrigin.sha256(raw).prefix(16))
    }
}
