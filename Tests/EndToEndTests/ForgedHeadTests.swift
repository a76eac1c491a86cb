import Foundation
import Testing
import TestOrigin

/// Only a key holder moves the highest version a device has seen (G8, docs/threats.md,
/// "Fast-forward"): a head that names the table in force, with a version far ahead, unsigned,
/// badly signed or signed by a stranger's key (with an expiry or not), freezes nothing. The
/// device refuses it and says why, records neither its version nor its expiry, and takes the
/// next genuine release (issue 53, 2).
@Suite(.awaitsCleanups) struct ForgedHeadTests {
    enum Forgery: String, CaseIterable, Sendable {
        /// The genuine head, its signature taken out and its version raised.
        case unsigned
        /// The genuine head and its signature, its version raised.
        case badlySigned
        /// The same release signed at that version by a key the device does not trust.
        case strangersKey
        /// The same, with an expiry under the stranger's signature, on a channel that signs with expiries.
        case strangersKeyWithExpiry
    }

    static let farAhead: Int64 = 9_000_000_000_000_000

    /// `text` with its first `"version": N` (the head's own, before its signature) set to `version`.
    static func raisingVersion(_ text: String, to version: Int64) throws -> String {
        let key = try #require(text.range(of: "\"version\": "))
        let end = try #require(text[key.upperBound...].firstIndex { !$0.isNumber })
        return text.replacingCharacters(in: key.upperBound..<end, with: String(version))
    }

    func forged(_ forgery: Forgery, site: HeadAndStoreTests.Site, release folder: String, head: String, expiring: [String]) throws -> String {
        switch forgery {
        case .unsigned:
            let signature = try #require(head.range(of: ", \"signature\": "))
            let end = try #require(head.lastIndex(of: "}"))
            return try Self.raisingVersion(head.replacingCharacters(in: signature.lowerBound..<end, with: ""), to: Self.farAhead)
        case .badlySigned:
            return try Self.raisingVersion(head, to: Self.farAhead)
        case .strangersKey, .strangersKeyWithExpiry:
            let other = site.dir.path("stranger")
            try FileManager.default.copyItem(atPath: folder, toPath: other)
            let signed = try Binary.run(["routes", other, "--compress", "--sign-key", site.dir.path("k2.key"), "--table-version", String(Self.farAhead)]
                                        + site.following + expiring)
            #expect(signed.status == 0, "\(signed.stderr)")
            return try #require(site.dir.read("stranger/Routes.beta.head"))
        }
    }

    @Test(arguments: Forgery.allCases)
    func aForgedHeadOverTheTableInForceFreezesNothing(_ forgery: Forgery) async throws {
        var site = try await HeadAndStoreTests.Site()
        site.channel = "beta"
        let expiring = forgery == .strangersKeyWithExpiry ? ["--expires", "7d"] : []
        let release1 = try site.publish(1, options: expiring)
        _ = try site.sync("committed", "release 1")
        let genuine = String(decoding: try #require(site.origin.file("Routes.beta.head")), as: UTF8.self)
        let seen = try #require(site.dir.read("device/cache/head.json"))
        let signedAt = try site.status()

        site.origin.put("Routes.beta.head", try forged(forgery, site: site, release: release1, head: genuine, expiring: expiring))
        let refused = try Binary.run(site.device)
        #expect(refused.status == 4, "\(forgery.rawValue): a forged head is refused: \(refused.stdout) \(refused.stderr)")
        let why = try site.run("why", ["--json"])
        #expect(try why.json()["reason"] as? String == "signature", "\(forgery.rawValue): \(why.stdout)")
        #expect(!(site.dir.read("device/cache/head.json") ?? "").contains(String(Self.farAhead)), "\(forgery.rawValue): the version seen never moves")
        #expect(site.dir.read("device/cache/head.json") == seen, "\(forgery.rawValue): nothing of the forged head is recorded")
        #expect(try site.status() == signedAt, "\(forgery.rawValue): the signature in force, its version and expiry, stay")

        try site.publish(2, options: expiring)
        _ = try site.sync("committed", "\(forgery.rawValue): the next genuine release")
        #expect(try site.served().hasPrefix("<h1>release 2</h1>"), "\(forgery.rawValue)")
    }

    /// The release a device rolled back from is not fetched nor checked again, so a head naming it
    /// moves nothing either, whatever version it says.
    @Test func aForgedHeadOverTheHeldBackReleaseFreezesNothing() async throws {
        var site = try await HeadAndStoreTests.Site()
        site.channel = "beta"
        try site.rolledBackFromRelease2()
        let genuine = String(decoding: try #require(site.origin.file("Routes.beta.head")), as: UTF8.self)
        site.origin.put("Routes.beta.head", try Self.raisingVersion(genuine, to: Self.farAhead))
        _ = try site.sync("held-back", "a forged head over release 2")
        #expect(!(site.dir.read("device/cache/head.json") ?? "").contains(String(Self.farAhead)), "the version seen never moves")
        try site.publish(3)
        _ = try site.sync("committed", "the next genuine release")
        #expect(try site.served().hasPrefix("<h1>release 3</h1>"))
    }

    /// On the default channel the table is the remote's word: a forged head is forgotten, the
    /// table answers, and the version seen is not the forger's.
    @Test func onTheDefaultChannelTheTableAnswersAndTheForgedVersionIsNotSeen() async throws {
        let site = try await HeadAndStoreTests.Site()
        try site.publish(1)
        _ = try site.sync("committed", "release 1")
        let genuine = String(decoding: try #require(site.origin.file("Routes.head")), as: UTF8.self)
        site.origin.put("Routes.head", try Self.raisingVersion(genuine, to: Self.farAhead))
        let polled = try Binary.run(site.device)
        let outcome = try polled.json()["outcome"] as? String ?? ""
        #expect(polled.status == 0 && ["unchanged", "not-modified"].contains(outcome), "\(polled.stdout) \(polled.stderr)")
        #expect(!(site.dir.read("device/cache/head.json") ?? "").contains(String(Self.farAhead)), "the version seen never moves")
        try site.publish(2)
        _ = try site.sync("committed", "the next genuine release")
        #expect(try site.served().hasPrefix("<h1>release 2</h1>"))
    }
}

extension HeadAndStoreTests.Site {
    /// The signature in force as `status --json` shows it (version, expiry).
    func status() throws -> String {
        let run = try Device("device", in: dir).run(["status", "--json", "--public-key", dir.path("k1.pub")])
        let signature = try run.json()["signature"] as? [String: Any] ?? [:]
        return "\(signature["version"] ?? "none") \(signature["expires"] ?? "never")"
    }
}
