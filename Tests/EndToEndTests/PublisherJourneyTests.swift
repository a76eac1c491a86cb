import Foundation
import Testing
import TestOrigin

/// Every way of publishing three releases in a row, through the built binary (issue 38): for each
/// publishing form × signing × placement, after every release a device that holds the previous one
/// adopts it, a new device installs it, `seed` fills a preset with it and `verify` passes.
@Suite(.awaitsCleanups) struct PublisherJourneyTests {
    enum Form: String, CaseIterable, Sendable {
        case plain, compress, delta
    }

    enum Signing: String, CaseIterable, Sendable {
        case unsigned, oneKey, twoKeysOneRun, twoKeysTwoRuns, expires, rotation
    }

    enum Placement: String, CaseIterable, Sendable {
        /// The publisher rewrites the remote folder itself, as the README's tour does.
        case inPlace
        /// Each release is built in a folder of its own and copied over the remote.
        case freshFolder
    }

    struct Journey: Sendable, CustomTestStringConvertible {
        var form: Form
        var signing: Signing
        var placement: Placement
        var testDescription: String { "\(form.rawValue), \(signing.rawValue), \(placement.rawValue)" }

        static let all = Form.allCases.flatMap { form in
            Signing.allCases.flatMap { signing in Placement.allCases.map { Journey(form: form, signing: signing, placement: $0) } }
        }
    }

    /// One publisher's folders and keys, and the devices that follow the remote.
    struct Publisher {
        let dir: Scratch
        var remote: String { dir.path("remote") }

        init() throws {
            dir = try Scratch.forTest()
            for key in ["k1", "k2"] { try dir.keygen(key) }
            try dir.keygen("k3", ["--rotate-from", dir.path("k1.key")])
        }

        /// Release `n` of a small site: an entry page, a bundle renamed with its content (as
        /// webpack does), a stylesheet that changes, and files that never change (enough of them
        /// that the table compresses).
        func writeRelease(_ n: Int, into folder: String) throws {
            let bundle = ReleaseBytesEndToEndTests.bundle(7, 12_000) + "\n// release \(n)\n"
            let name = "js/app.\(String(repeating: String(n), count: 8)).js"
            try? FileManager.default.removeItem(atPath: folder + "/js")
            try write(folder + "/" + name, bundle)
            try write(folder + "/index.html", "<h1>release \(n)</h1><script src=\(name)></script>")
            try write(folder + "/css/style.css", "body { margin: \(n)px }\n" + ReleaseBytesEndToEndTests.bundle(9, 3_000))
            for m in 0..<30 { try write(folder + "/static/file-\(m).txt", "unchanged \(m)\n") }
        }

        func write(_ path: String, _ text: String) throws {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }

        /// The `routes` runs of release `n` (two for two keys in two runs).
        func signingRuns(_ signing: Signing, release n: Int) -> [[String]] {
            let k1 = dir.path("k1.key"), k2 = dir.path("k2.key")
            switch signing {
            case .unsigned: return [[]]
            case .oneKey: return [["--sign-key", k1]]
            case .twoKeysOneRun: return [["--sign-key", k1, "--sign-key", k2]]
            case .twoKeysTwoRuns: return [["--sign-key", k1], ["--sign-key", k2]]
            case .expires: return [["--sign-key", k1, "--expires", "7d"]]
            case .rotation: return n == 1 ? [["--sign-key", k1]] : [["--sign-key", dir.path("k3.key"), "--rotation", dir.path("k3.rotation")]]
            }
        }

        /// What a device trusts; the rotation's devices ship with the first key only.
        func trust(_ signing: Signing) -> [String] {
            switch signing {
            case .unsigned: return []
            case .oneKey, .expires, .rotation: return ["--public-key", dir.path("k1.pub")]
            case .twoKeysOneRun, .twoKeysTwoRuns:
                return ["--public-key", dir.path("k1.pub"), "--public-key", dir.path("k2.pub"), "--signatures-required", "2"]
            }
        }

        /// Publishes release `n`, returning the folder it was built in.
        func publish(_ n: Int, _ journey: Journey) throws {
            let build = journey.placement == .inPlace ? remote : dir.path("build-\(n)")
            let previous = journey.placement == .inPlace ? dir.path("kept-\(n - 1)") : dir.path("build-\(n - 1)")
            if journey.placement == .inPlace, journey.form == .delta, n > 1 {
                // The publisher keeps the release before this one, for its patches.
                try? FileManager.default.removeItem(atPath: previous)
                try FileManager.default.copyItem(atPath: remote, toPath: previous)
            }
            try writeRelease(n, into: build)
            var form: [String] = []
            switch journey.form {
            case .plain: break
            case .compress: form = ["--compress"]
            case .delta: form = n == 1 ? ["--compress"] : ["--delta-from", previous]
            }
            for signing in signingRuns(journey.signing, release: n) {
                let routes = try Binary.run(["routes", build] + form + signing)
                #expect(routes.status == 0, "\(journey.testDescription), release \(n): routes \(form + signing): \(routes.stderr)")
            }
            if journey.placement == .freshFolder { try upload(build) }
        }

        /// Copies a build over the remote, as an upload does: files replaced, none deleted.
        func upload(_ build: String) throws {
            let files = FileManager.default.enumerator(atPath: build)!
            while let relative = files.nextObject() as? String {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: build + "/" + relative, isDirectory: &isFolder), !isFolder.boolValue else { continue }
                let target = remote + "/" + relative
                try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try? FileManager.default.removeItem(atPath: target)
                try FileManager.default.copyItem(atPath: build + "/" + relative, toPath: target)
            }
        }

        func device(_ name: String) -> [String] {
            ["--remote", "file://" + remote] + Device(name, in: dir).flags
        }

        /// Release `n` reaches a device that holds the one before, a new device and a seeded preset.
        func checkReached(_ n: Int, _ journey: Journey) throws {
            let what = "\(journey.testDescription), release \(n)"
            let trust = trust(journey.signing)
            let page = "<h1>release \(n)</h1>"
            for name in ["held", "new-\(n)"] {
                let device = self.device(name)
                let sync = try Binary.run(["sync", "--json"] + device + trust)
                #expect(sync.status == 0, "\(what), \(name): \(sync.stderr)")
                #expect(try sync.json()["outcome"] as? String == "committed", "\(what), \(name): \(sync.stdout)")
                let resolved = try Binary.run(["resolve", "index.html", "--offline"] + device)
                let served = try? String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8)
                #expect(served?.hasPrefix(page) == true, "\(what), \(name): \(served ?? resolved.stderr)")
                let verify = try Binary.run(["verify"] + device)
                #expect(verify.status == 0, "\(what), \(name): verify: \(verify.stderr)")
            }
            let seeded = ["--remote", "file://" + remote, "--preset", dir.path("seeded")] + trust
            let seed = try Binary.run(["seed"] + seeded)
            #expect(seed.status == 0, "\(what): seed: \(seed.stderr)")
            #expect(dir.read("seeded/index.html")?.hasPrefix(page) == true, "\(what): seeded \(dir.read("seeded/index.html") ?? "nothing")")
            let check = try Binary.run(["seed", "--check"] + seeded)
            #expect(check.status == 0, "\(what): seed --check: \(check.stderr)")
        }
    }

    @Test(arguments: Journey.all)
    func threeReleasesInARowReachEveryDevice(_ journey: Journey) throws {
        let publisher = try Publisher()
        for n in 1...3 {
            try publisher.publish(n, journey)
            try publisher.checkReached(n, journey)
        }
    }

    /// One folder switched from plain to compressed and back, signed, in place.
    @Test func oneFolderSwitchedBetweenPlainAndCompressedReachesEveryDevice() throws {
        let publisher = try Publisher()
        let journey = Journey(form: .plain, signing: .oneKey, placement: .inPlace)
        let forms: [[String]] = [[], ["--compress"], [], ["--compress"]]
        for (index, form) in forms.enumerated() {
            let n = index + 1
            try publisher.writeRelease(n, into: publisher.remote)
            let routes = try Binary.run(["routes", publisher.remote, "--sign-key", publisher.dir.path("k1.key")] + form)
            #expect(routes.status == 0, "release \(n) \(form): \(routes.stderr)")
            #expect(try Binary.run(["routes", publisher.remote, "--check"]).status == 0, "release \(n): --check")
            try publisher.checkReached(n, journey)
        }
    }
}
