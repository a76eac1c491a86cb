import Foundation
import Testing
import TestOrigin

/// The publisher's promises of issue 53, through the built binary against a folder remote read by
/// devices over `file://`: a signed channel is never unsigned by accident, an empty build never
/// empties the site, a republish keeps the keys' rotations and the expiry, `prune --keep 1` keeps
/// what `rollback` goes back to, and `routes --output FILE` still signs.
@Suite(.awaitsCleanups) struct PublisherPromiseTests {
    struct Setup {
        let publisher: PublishTests.Publisher
        var remote: String { publisher.remote }
        var dir: Scratch { publisher.dir }

        init() throws {
            let dir = try Scratch()
            publisher = try PublishTests.Publisher(remote: dir.path("remote"), publicURL: "file://" + dir.path("remote"))
            Cleanups.add { [dir] in dir.remove() }
            for key in ["k2"] { try publisher.dir.keygen(key) }
            try publisher.dir.keygen("k3", ["--rotate-from", publisher.dir.path("k1.key")])
        }

        func run(_ arguments: [String]) throws -> Binary.Run { try Binary.run(arguments) }

        /// The head's signature, parsed: what devices check.
        func headSignature() throws -> [String: Any] {
            let head = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: remote + "/Routes.head"))) as? [String: Any])
            let text = try #require(head["signature"] as? String)
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }

        /// A device that trusts `keys` and has never synced.
        func newDevice(_ name: String, trusting keys: [String]) throws -> Binary.Run {
            try Device(name, in: dir).run(["sync", "--json", "--remote", "file://" + remote]
                + keys.flatMap { ["--public-key", dir.path($0 + ".pub")] })
        }
    }

    @Test func aSignedChannelIsUnsignedOnlyOnPurpose() throws {
        let s = try Setup()
        try s.publisher.publish(1)
        let version = try s.headSignature()["version"] as? Int
        for (what, arguments) in [("publish", ["publish", try s.publisher.build(2), "--to", s.remote]),
                                  ("halt", ["halt", s.remote]),
                                  ("routes", ["routes", s.remote])] {
            let refused = try s.run(arguments)
            #expect(refused.status == 64 && refused.stderr.contains("--unsigned"), "\(what): \(refused.status) \(refused.stderr)")
            #expect(try s.headSignature()["version"] as? Int == version, "\(what) changed the head")
        }
        #expect(try s.newDevice("d", trusting: ["k1"]).status == 0, "the channel is still signed and whole")
        let meant = try s.run(["publish", try s.publisher.build(2), "--to", s.remote, "--unsigned"])
        #expect(meant.status == 0, "\(meant.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.remote + "/Routes.json.sig"), "no signature of another table is left beside it")
        #expect(try s.newDevice("unsigned", trusting: []).status == 0)
    }

    @Test func anEmptyBuildNeverEmptiesTheSite() throws {
        let s = try Setup()
        try s.publisher.publish(1)
        let empty = s.dir.path("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let refused = try s.run(["publish", empty, "--to", s.remote, "--sign-key", s.dir.path("k1.key")])
        #expect(refused.status == 64 && refused.stderr.contains("--allow-empty"), "\(refused.stderr)")
        #expect(try s.newDevice("d", trusting: ["k1"]).status == 0)
        #expect(try s.publisher.served("d") == "<h1>release 1</h1>")
        let asked = try s.run(["publish", empty, "--to", s.remote, "--sign-key", s.dir.path("k1.key"), "--allow-empty", "--json"])
        #expect(asked.status == 0, "\(asked.stderr)")
    }

    @Test func republishesKeepTheKeysRotationsAndTheExpiry() throws {
        let s = try Setup()
        try s.publisher.publish(1)
        let rotated = try s.run(["publish", try s.publisher.build(2), "--to", s.remote, "--sign-key", s.dir.path("k3.key"),
                                 "--rotation", s.dir.path("k3.rotation"), "--expires", "7d"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let lifetime = { (signature: [String: Any]) -> Int? in
            guard let signed = signature["signed"] as? Int, let expires = signature["expires"] as? Int else { return nil }
            return expires - signed
        }
        #expect(lifetime(try s.headSignature()) == 7 * 86400)
        for (n, arguments) in [["halt", s.remote], ["resume", s.remote], ["rollback", "--channel", "default", s.remote],
                               ["promote", "--from", "default", "--to", "beta", s.remote]].enumerated() {
            let run = try s.run(arguments + ["--sign-key", s.dir.path("k3.key")])
            #expect(run.status == 0, "\(arguments[0]): \(run.stderr)")
            guard arguments[0] != "promote" else { continue }
            let signature = try s.headSignature()
            #expect((signature["rotations"] as? [Any])?.count == 1, "\(arguments[0]) kept the rotation: \(signature)")
            #expect(lifetime(signature) == 7 * 86400, "\(arguments[0]) kept the expiry policy: \(signature)")
            // A device that ships with the old key alone follows the rotation to the republished head.
            let device = try s.newDevice("old-key-\(n)", trusting: ["k1"])
            #expect(device.status == 0, "\(arguments[0]): \(device.stderr)")
        }
        // Signed by a key the rotations do not end at: said plainly, nothing written.
        let stranger = try s.run(["halt", s.remote, "--sign-key", s.dir.path("k2.key")])
        #expect(stranger.status == 64 && stranger.stderr.contains("--rotation"), "\(stranger.stderr)")
        // --rotation is taken by every republish.
        let given = try s.run(["halt", s.remote, "--sign-key", s.dir.path("k3.key"), "--rotation", s.dir.path("k3.rotation"), "--expires", "1d"])
        #expect(given.status == 0, "\(given.stderr)")
        #expect(lifetime(try s.headSignature()) == 86400)
    }

    @Test func pruneKeepOneKeepsWhatRollbackGoesBackTo() throws {
        let s = try Setup()
        for n in 1...3 { try s.publisher.publish(n) }
        let pruned = try s.run(["prune", s.remote, "--keep", "1", "--min-age", "0", "--json"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect((try pruned.json()["kept"] as? [String: [Int]])?["default"]?.count == 2, "\(pruned.stdout)")
        let back = try s.run(["rollback", "--channel", "default", s.remote, "--sign-key", s.dir.path("k1.key")])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try s.newDevice("d", trusting: ["k1"]).status == 0)
        #expect(try s.publisher.served("d") == "<h1>release 2</h1>")
    }

    @Test func pruneKeepsTheFormsOfADefaultChannelFromBeforeHeads() throws {
        let s = try Setup()
        try FileManager.default.copyItem(atPath: try s.publisher.build(1), toPath: s.remote)
        #expect(try s.run(["routes", s.remote, "--compress"]).status == 0)
        try PublisherDefectTests.earlierVersionsTableForm(in: s.remote)
        let pruned = try s.run(["prune", s.remote, "--min-age", "0", "--json"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        let device = try s.newDevice("d", trusting: [])
        #expect(device.status == 0, "\(device.stderr)")
        #expect(try device.json()["formFallbacks"] as? Int == 0 && (try device.json()["compressedFiles"] as? Int ?? 0) > 0,
                "the forms the table's index names are still there: \(device.stdout)")
    }

    @Test func routesOutputFileStillWritesTheSignatureAndManifestBesideIt() throws {
        let s = try Setup()
        let build = try s.publisher.build(1)
        let table = s.dir.path("out/Routes.json")
        try FileManager.default.createDirectory(atPath: s.dir.path("out"), withIntermediateDirectories: true)
        for _ in 0..<2 {
            let run = try s.run(["routes", build, "--output", table, "--sign-key", s.dir.path("k1.key"), "--release", "r1"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: table + ".sig") && FileManager.default.fileExists(atPath: table + ".release"))
        #expect(!FileManager.default.fileExists(atPath: build + "/Routes.json"), "the build folder is left as it was")
        // The table and its sidecars beside the build's files: a remote devices that check signatures take.
        let remote = s.dir.path("legacy")
        try FileManager.default.copyItem(atPath: build, toPath: remote)
        for name in ["Routes.json", "Routes.json.sig", "Routes.json.release"] {
            try FileManager.default.copyItem(atPath: s.dir.path("out/" + name), toPath: remote + "/" + name)
        }
        let device = try Device("d", in: s.dir).run(["sync", "--json", "--remote", "file://" + remote, "--public-key", s.dir.path("k1.pub")])
        #expect(device.status == 0, "\(device.stderr)")
        let stdout = try s.run(["routes", build, "--output", "-", "--sign-key", s.dir.path("k1.key")])
        #expect(stdout.status == 64 && stdout.stderr.contains("--output FILE"), "\(stdout.stderr)")
        let forms = try s.run(["routes", build, "--output", table, "--compress"])
        #expect(forms.status == 64 && forms.stderr.contains("--out-dir"), "\(forms.stderr)")
    }
}
