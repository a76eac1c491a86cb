import Foundation
import Testing
import TestOrigin

@Suite(.awaitsCleanups) struct SigningAndRollbackTests {
    @Test func signedTablesAreRequiredOnceAKeyIsConfigured() async throws {
        let publisher = try await Publisher.make()
        let (origin, dir) = (publisher.origin, publisher.dir)
        try dir.keygen("keys/release")
        #expect(try Binary.run(["keygen", "--output", dir.path("keys/release")]).status == 64)
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path("keys/release.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)

        func publish(_ content: String, version: Int) throws {
            try publisher.publish(content, ["--sign-key", "@keys/release.key", "--table-version", String(version)])
        }
        let common = ["--remote", origin.url] + Device(in: dir).flags + ["--public-key", dir.path("keys/release.pub")]

        try publish("v1", version: 10)
        #expect(try Binary.run(["sync"] + common).status == 0)

        // A table changed after signing.
        try publish("v2", version: 11)
        origin.put("Routes.json", dir.read("site/Routes.json")!.replacingOccurrences(of: "\"size\": 2", with: "\"size\": 3"))
        let tampered = try Binary.run(["sync"] + common)
        #expect(tampered.status == 4)
        #expect(tampered.stderr.contains("bad signature"))

        // No sidecar at all.
        try publish("v2", version: 11)
        origin.remove("Routes.json.sig")
        let unsigned = try Binary.run(["sync"] + common)
        #expect(unsigned.status == 4)
        #expect(unsigned.stderr.contains("not signed"))

        // Validly signed v2, then a validly signed but older table (a replayed release).
        try publish("v2", version: 11)
        #expect(try Binary.run(["sync"] + common).status == 0)
        try publish("v0", version: 9)
        let replay = try Binary.run(["sync"] + common)
        #expect(replay.status == 4)
        #expect(replay.stderr.contains("older than version 11"))
        let resolved = try Binary.run(["resolve", "app.js", "--offline"] + common)
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8) == "v2")

        // Signed seed copies the sidecar along.
        try publish("v3", version: 12)
        let seed = try Binary.run(["seed", "--remote", origin.url, "--preset", dir.path("seeded"), "--public-key", dir.path("keys/release.pub")])
        #expect(seed.status == 0, "\(seed.stderr)")
        #expect(dir.read("seeded/Routes.json.sig") != nil)
    }

    @Test func rollbackRestoresThePreviousGenerationAndHoldsTheBadTableBack() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        #expect(try Binary.run(["rollback"] + common).status == 2)
        origin.publish(["app.js": "good"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        origin.publish(["app.js": "bad"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        let rollback = try Binary.run(["rollback", "--json"] + common)
        #expect(rollback.status == 0)
        #expect(try rollback.json()["to"] as? Int == 1)
        func current() throws -> String {
            let path = try Binary.run(["resolve", "app.js", "--offline"] + common).stdout.trimmingCharacters(in: .newlines)
            return try String(contentsOfFile: path, encoding: .utf8)
        }
        #expect(try current() == "good")
        // The remote still publishes the bad build: it is not applied again.
        let held = try Binary.run(["sync", "--json"] + common)
        #expect(try held.json()["outcome"] as? String == "held-back")
        #expect(try current() == "good")
        // A new release goes through.
        origin.publish(["app.js": "fixed"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        #expect(try current() == "fixed")
        let status = try Binary.run(["status", "--json"] + common).json()
        #expect((status["generations"] as? [Any])?.count ?? 0 >= 2)
    }
}
