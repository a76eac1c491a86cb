import Crypto
import RouteSync
import Testing

/// Staged adoption (G10) without a network: versions, manifests, places and decisions.
@Suite struct RolloutTests {
    @Test func versionsCompareNumericallySegmentBySegment() throws {
        #expect(try NativeVersion("2.10.0") > NativeVersion("2.9.1"))
        #expect(try NativeVersion("10") > NativeVersion("9.99"))
        #expect(try NativeVersion("2.3") == NativeVersion("2.3.0"))
        #expect(try NativeVersion("2.3.0.0") == NativeVersion("2.3"))
        #expect(try NativeVersion("2.3.1") > NativeVersion("2.3"))
        #expect(try NativeVersion("1.0.0") < NativeVersion("1.0.1"))
        for bad in ["2.3.0-beta", "v2", "", "2..3", "2.3.", "1.x", "-1", "2 .3"] {
            #expect(throws: CenariusError.self, "\(bad) must be refused") { try NativeVersion(bad) }
        }
        do {
            _ = try NativeVersion("2.3.0-beta")
        } catch {
            #expect(error.code == .usage && error.message.contains("pre-release"))
        }
    }

    @Test func manifestsParseWithEveryKeyOptional() throws {
        let full = try ReleaseManifest.parse(Array(#"{"release":"r1","requires":{"native":"2.3.0"},"rollout":{"start":100,"duration":3600,"halted":true},"extra":1}"#.utf8), source: "m")
        #expect(full.release == "r1")
        #expect(full.requiresNative == (try NativeVersion("2.3.0")))
        #expect(full.rollout == .init(start: 100, duration: 3600, halted: true))
        #expect(try ReleaseManifest.parse(Array("{}".utf8), source: "m") == ReleaseManifest())
        // What `routes` writes reads back the same.
        #expect(try ReleaseManifest.parse(full.serialized(), source: "m") == full)
        for bad in [#"[]"#, #"{"release": 5}"#, #"{"requires":{"native":"2.x"}}"#, #"{"rollout":{"duration":-1}}"#, #"{"rollout":{"halted":"yes"}}"#, "{"] {
            #expect(throws: CenariusError.self, "\(bad)") { try ReleaseManifest.parse(Array(bad.utf8), source: "m") }
        }
    }

    @Test func placesAreStablePerDeviceAndDifferPerRelease() {
        let a = RolloutGate.place(deviceID: "kiosk-17", release: "r1")
        #expect(a == RolloutGate.place(deviceID: "kiosk-17", release: "r1"))
        #expect(a >= 0 && a < 1)
        #expect(a != RolloutGate.place(deviceID: "kiosk-17", release: "r2"))
        #expect(a != RolloutGate.place(deviceID: "kiosk-18", release: "r1"))
        // The place is SHA-256(device id, "\n", release name), its first 53 bits as a fraction.
        let digest = Array(SHA256.hash(data: Array("kiosk-17\nr1".utf8)))
        let bits = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 11
        #expect(a == Double(bits) / Double(UInt64(1) << 53))
    }

    @Test func overAFleetTheAdoptedFractionFollowsTheSchedule() {
        let rollout = ReleaseManifest.Rollout(start: 1000, duration: 3600)
        let places = (0..<100_000).map { RolloutGate.place(deviceID: "device-\($0)", release: "2026.11-a") }
        for step in 0...20 {
            let now = 1000 + Double(step) * 180
            let adopted = places.filter { RolloutGate.moment(rollout, place: $0) <= now }.count
            let expected = Double(step) / 20
            #expect(abs(Double(adopted) / 100_000 - expected) < 0.01, "at \(step * 5)% of the rollout: \(adopted) adopted")
        }
    }

    @Test func decisionsFollowCompatibilityThenHaltThenTime() throws {
        let device = RolloutGate.Device(id: "kiosk-1", native: try NativeVersion("2.1.0"))
        let place = RolloutGate.place(deviceID: "kiosk-1", release: "r")
        let rollout = ReleaseManifest.Rollout(start: 1000, duration: 1000)
        let moment = 1000 + place * 1000
        let staged = ReleaseManifest(release: "r", rollout: rollout)
        #expect(RolloutGate.decide(ReleaseManifest(), release: "r", device: device, now: 0) == .adopt)
        #expect(RolloutGate.decide(staged, release: "r", device: device, now: moment - 1) == .wait(until: moment))
        #expect(RolloutGate.decide(staged, release: "r", device: device, now: moment) == .adopt)
        // Offline past its moment: adopts at the next poll.
        #expect(RolloutGate.decide(staged, release: "r", device: device, now: 1_000_000) == .adopt)

        var halted = staged
        halted.rollout?.halted = true
        #expect(RolloutGate.decide(halted, release: "r", device: device, now: 1_000_000) == .halted)

        var gated = staged
        gated.requiresNative = try NativeVersion("2.3.0")
        #expect(RolloutGate.decide(gated, release: "r", device: device, now: 1_000_000) == .incompatible("requires native 2.3.0, have 2.1.0"))
        let unknown = RolloutGate.Device(id: "kiosk-1", native: nil)
        #expect(RolloutGate.decide(gated, release: "r", device: unknown, now: 1_000_000).reason == "compatibility")
        let newer = RolloutGate.Device(id: "kiosk-1", native: try NativeVersion("2.10"))
        #expect(RolloutGate.decide(gated, release: "r", device: newer, now: 1_000_000) == .adopt)
    }

    @Test func oneSignatureCoversTheTableAndTheManifest() throws {
        let key = Curve25519.Signing.PrivateKey()
        let table = Array(#"[{"uri":"a","hash":"0cc175b9c0f1b6a831c399e269772661"}]"#.utf8)
        let manifest = ReleaseManifest(release: "r", rollout: .init(start: 0, duration: 60)).serialized()
        let signature = try TableSignature.sign(table: table, manifest: manifest, version: 7, with: key)
        let parsed = try TableSignature.parse(signature.serialized(), source: "sig")
        #expect(try parsed.bound(to: [TableSignature.tableRole: table, TableSignature.releaseRole: manifest], source: "t") == signature)
        try parsed.verify(table: table, manifest: manifest, with: key.publicKey, source: "t")
        var halted = manifest
        halted.replaceSubrange(halted.indices.suffix(1), with: Array(" ".utf8))
        #expect(throws: CenariusError.self) { try parsed.verify(table: table, manifest: halted, with: key.publicKey, source: "t") }
        #expect(throws: CenariusError.self) { try parsed.verify(table: table, manifest: nil, with: key.publicKey, source: "t") }
        // A manifest added beside a table signed without one is refused too.
        let plain = try TableSignature.sign(table: table, version: 8, with: key)
        try plain.verify(table: table, with: key.publicKey, source: "t")
        #expect(throws: CenariusError.self) { try plain.verify(table: table, manifest: manifest, with: key.publicKey, source: "t") }
    }
}
