import Foundation
import Testing
import TestOrigin

/// `publish`, `releases`, `rollback`, `halt`, `resume` and `promote` as a publisher runs them, to
/// the two kinds of remote: a folder nginx serves, and a three-replica OpenStack Swift through
/// its S3 API (scripts/object-store). Devices sync from what the server serves after each step.
@Suite(.serialized, .awaitsCleanups) struct PublishTests {
    /// A publisher's build folders and keys, and one device.
    struct Publisher {
        let dir: Scratch
        let remote: String
        let publicURL: String
        let environment: [String: String]
        let remoteFlags: [String]
        let deviceFlags: [String]

        init(remote: String, publicURL: String, environment: [String: String] = [:], remoteFlags: [String] = [], deviceFlags: [String] = []) throws {
            dir = try Scratch.forTest()
            self.remote = remote
            self.publicURL = publicURL
            self.environment = environment
            self.remoteFlags = remoteFlags
            self.deviceFlags = deviceFlags
            try dir.keygen("k1")
        }

        /// Release `n`'s build folder: a bundle that changes a little, a page, files that never change.
        /// A publisher of `s3://BUCKET/app` on the shared three-replica store, in a bucket of its own named `name-…`.
        /// `remoteFlags`: more of the publisher's flags for the store (`--jobs 4`).
        static func onObjectStore(_ name: String, remoteFlags: [String] = []) async throws -> (store: ObjectStore, bucket: String, publisher: Publisher) {
            let store = try await ObjectStore.shared()
            let bucket = name + "-" + String(UUID().uuidString.prefix(8)).lowercased()
            let base = try store.bucket(bucket)
            let publisher = try Publisher(remote: "s3://\(bucket)/app", publicURL: base + "/app", environment: store.environment,
                                          remoteFlags: ["--endpoint", store.endpoint] + remoteFlags)
            return (store, bucket, publisher)
        }

        func build(_ n: Int) throws -> String {
            let folder = dir.path("build-\(n)")
            guard !FileManager.default.fileExists(atPath: folder) else { return folder }
            try dir.write("build-\(n)/js/app.\(String(repeating: String(n), count: 8)).js", ReleaseBytesEndToEndTests.bundle(3, 40_000) + "\n// release \(n)\n")
            try dir.write("build-\(n)/index.html", "<h1>release \(n)</h1>")
            for m in 0..<20 { try dir.write("build-\(n)/static/file-\(m).txt", "unchanged \(m)\n") }
            // A file zstd cannot shrink: its bytes go to the store as they are.
            var noise = SystemRandomNumberGenerator()
            try FileManager.default.createDirectory(atPath: dir.path("build-\(n)/img"), withIntermediateDirectories: true)
            try Data((0..<2048).map { _ in UInt8.random(in: 0...255, using: &noise) }).write(to: URL(fileURLWithPath: dir.path("build-\(n)/img/noise-\(n).bin")))
            return folder
        }

        func run(_ arguments: [String], killAfter: Double? = nil) throws -> Binary.Run {
            try Binary.run(arguments, environment: environment, killAfter: killAfter)
        }

        @discardableResult
        func publish(_ n: Int, _ extra: [String] = [], expectUploads: Bool = true) throws -> [String: Any] {
            let run = try run(["publish", try build(n), "--to", remote, "--sign-key", dir.path("k1.key"), "--release", "r\(n)", "--json"] + remoteFlags + extra)
            #expect(run.status == 0, "publish \(n): \(run.stderr)")
            let summary = try run.json()
            if expectUploads { #expect((summary["uploaded"] as? Int ?? 0) > 0, "publish \(n): \(run.stdout)") }
            return summary
        }

        /// A sync of `device`, which follows `channel`.
        func sync(_ what: String, device: String = "device", channel: String = "default") throws -> [String: Any] {
            let run = try Device(device, in: dir).run(["sync", "--json", "--remote", publicURL, "--public-key", dir.path("k1.pub"), "--channel", channel,
                                                       "--device-id", device + "-" + dir.root.suffix(12)] + deviceFlags)
            #expect(run.status == 0, "\(what): \(run.stderr)")
            return (try? run.json()) ?? [:]
        }

        func served(_ device: String = "device") throws -> String {
            try Device(device, in: dir).served()
        }

        func releases() throws -> [[String: Any]] {
            let run = try run(["releases", remote, "--json"] + remoteFlags)
            #expect(run.status == 0, "releases: \(run.stderr)")
            let channels = try #require(try run.json()["channels"] as? [[String: Any]])
            return try #require(channels.first { $0["name"] as? String == "default" }?["releases"] as? [[String: Any]])
        }

        /// Three releases in a row, each reaching the device; an unchanged build published twice
        /// uploads nothing; then rollback, halt, resume and promote, each seen by the device or the remote.
        /// Every object under `_cenarius/` of a folder remote, with its bytes.
        func store() -> [String: Data] {
            guard !remote.contains("://") else { return [:] }
            var objects: [String: Data] = [:]
            let enumerator = FileManager.default.enumerator(atPath: remote + "/_cenarius")
            while let relative = enumerator?.nextObject() as? String {
                if let data = FileManager.default.contents(atPath: remote + "/_cenarius/" + relative) { objects[relative] = data }
            }
            return objects
        }

        func walk() throws {
            var written: [String: Data] = [:]
            for n in 1...3 {
                if n == 2, !remote.contains("://") {
                    // An earlier version's compressed table at its mutable name: the publish removes it.
                    try Data("stale".utf8).write(to: URL(fileURLWithPath: remote + "/_cenarius/Routes.json.zst"))
                }
                let summary = try publish(n)
                let now = store()
                for (name, bytes) in written { #expect(now[name] == bytes, "release \(n): _cenarius/\(name) changed or went") }
                #expect(now["Routes.json.zst"] == nil, "release \(n): no mutable name under _cenarius/")
                written = now
                if n > 1 { #expect((summary["skipped"] as? Int ?? 0) > 20, "release \(n) skips what the store holds: \(summary)") }
                let synced = try sync("release \(n)")
                #expect(synced["outcome"] as? String == "committed", "release \(n): \(synced)")
                if n == 3 { #expect((synced["patchedFiles"] as? Int ?? 0) >= 1, "release 3 arrives as a patch: \(synced)") }
                #expect(try served() == "<h1>release \(n)</h1>")
            }
            for again in 1...2 {
                let summary = try publish(3, expectUploads: false)
                #expect(summary["unchanged"] as? Bool == true && summary["uploaded"] as? Int == 0, "republish \(again): \(summary)")
            }
            let listed = try releases()
            #expect(listed.count == 3 && listed.first?["current"] as? Bool == true && listed.first?["release"] as? String == "r3", "\(listed)")

            let unsigned = try run(["rollback", "--channel", "default", remote] + remoteFlags)
            #expect(unsigned.status == 64 && unsigned.stderr.contains("--sign-key"), "a signed channel needs a key: \(unsigned.stderr)")
            let back = try run(["rollback", "--channel", "default", remote, "--sign-key", dir.path("k1.key"), "--json"] + remoteFlags)
            #expect(back.status == 0, "rollback: \(back.stderr)")
            #expect(try back.json()["forms"] as? String == "reused", "another table: its packs as the store holds them, delta packs made")
            let rolledBack = try sync("after the rollback")
            #expect(rolledBack["outcome"] as? String == "committed" && rolledBack["formFallbacks"] as? Int == 0, "\(rolledBack)")
            #expect(try served() == "<h1>release 2</h1>", "the device went back to release 2")

            // The table the head names already: pointers only, the store's forms as they are.
            let halt = try run(["halt", remote, "--sign-key", dir.path("k1.key"), "--json"] + remoteFlags)
            #expect(halt.status == 0, "halt: \(halt.stderr)")
            #expect(try halt.json()["forms"] as? String == "store", "\(halt.stdout)")
            // The table is served already, byte for byte: the head, its record, the signature and the manifest change.
            #expect(try halt.json()["uploaded"] as? Int == 4, "\(halt.stdout)")
            #expect(try releases().first?["rollout"] as? String == "rollout: halted")
            #expect(try sync("halted")["outcome"] as? String != nil)
            let resume = try run(["resume", remote, "--sign-key", dir.path("k1.key"), "--json"] + remoteFlags)
            #expect(resume.status == 0, "resume: \(resume.stderr)")
            #expect(try resume.json()["forms"] as? String == "store", "\(resume.stdout)")
            #expect(try resume.json()["uploaded"] as? Int == 4, "\(resume.stdout)")
            #expect(try releases().first?["rollout"] as? String != "rollout: halted")
            // A new device installs the resumed release whole from what the head names.
            let resumed = try Device("resumed", in: dir).run(["sync", "--json", "--remote", publicURL, "--public-key", dir.path("k1.pub")] + deviceFlags)
            #expect(resumed.status == 0 && (try? resumed.json()["outcome"] as? String) == "committed", "\(resumed.stderr)")
            #expect(try served("resumed") == "<h1>release 2</h1>")

            let promote = try run(["promote", "--from", "default", "--to", "beta", remote, "--sign-key", dir.path("k1.key"), "--json"] + remoteFlags)
            #expect(promote.status == 0, "promote: \(promote.stderr)")
            let promoted = try promote.json()
            let defaultTable = try #require(listedTable(try releases()))
            #expect(promoted["table"] as? String == defaultTable, "the same table bytes on beta: \(promoted)")
            let all = try run(["releases", remote, "--json"] + remoteFlags)
            let names = ((try all.json()["channels"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
            #expect(names == ["beta", "default"], "\(all.stdout)")

            // A device on beta polls beta's head alone; a release published to beta reaches it and no other.
            #expect(try sync("beta, promoted", device: "beta", channel: "beta")["outcome"] as? String == "committed")
            #expect(try served("beta") == "<h1>release 2</h1>")
            try publish(4, ["--channel", "beta"])
            #expect(try sync("release 4 on beta", device: "beta", channel: "beta")["outcome"] as? String == "committed")
            #expect(try served("beta") == "<h1>release 4</h1>")
            #expect(["unchanged", "not-modified"].contains(try sync("the default channel meanwhile")["outcome"] as? String ?? ""))
            #expect(try served() == "<h1>release 2</h1>", "beta's release stays on beta")
            let missing = try Device("gamma", in: dir).run(["sync", "--remote", publicURL, "--channel", "gamma"] + deviceFlags)
            #expect(missing.status == 3, "a channel with no head is the remote's failure, never the default channel's release: \(missing.stderr)")
            let tested = try run(["promote", "--from", "beta", "--to", "default", remote, "--sign-key", dir.path("k1.key")] + remoteFlags)
            #expect(tested.status == 0, "promote: \(tested.stderr)")
            #expect(try sync("release 4 promoted to default")["outcome"] as? String == "committed")
            #expect(try served() == "<h1>release 4</h1>")

            // Rollback, halt, resume and promote only add to the store too.
            let now = store()
            for (name, bytes) in written { #expect(now[name] == bytes, "_cenarius/\(name) changed or went") }

            // Prune: young objects stay whatever names them; with no window, only what the kept releases name stays.
            let young = try run(["prune", remote, "--json"] + remoteFlags)
            let kept = (try? young.json()["deleted"] as? [String]) ?? ["?"]
            #expect(young.status == 0 && kept.isEmpty, "\(young.stdout) \(young.stderr)")
            let dry = try run(["prune", remote, "--keep", "1", "--min-age", "0", "--dry-run", "--json"] + remoteFlags)
            let planned = (try? dry.json()["deleted"] as? [String]) ?? []
            #expect(dry.status == 0 && !planned.isEmpty, "\(dry.stdout) \(dry.stderr)")
            let pruned = try run(["prune", remote, "--keep", "1", "--min-age", "0", "--json"] + remoteFlags)
            let deleted = (try? pruned.json()["deleted"] as? [String]) ?? []
            #expect(pruned.status == 0 && deleted == planned, "the dry run said what went: \(pruned.stdout) \(pruned.stderr)")
            #expect(try run(["prune", remote, "--keep", "1", "--min-age", "0", "--json"] + remoteFlags).json()["deleted"] as? [String] == [], "a second prune finds nothing")
            // What is left is whole: a new device installs the current release from it.
            let fresh = try Device("fresh", in: dir).run(["sync", "--json", "--remote", publicURL, "--public-key", dir.path("k1.pub")] + deviceFlags)
            #expect(fresh.status == 0 && (try? fresh.json()["outcome"] as? String) == "committed", "\(fresh.stderr)")
            let gone = try run(["rollback", "--channel", "default", remote, "--sign-key", dir.path("k1.key"), "--to", "1"] + remoteFlags)
            #expect(gone.status == 2, "\(gone.stderr)")
        }

        private func listedTable(_ releases: [[String: Any]]) -> String? { releases.first?["table"] as? String }
    }

    @Test func aFolderServedByNginx() throws {
        let origin = try TLSOrigin()
        let site = origin.folder("site")
        let publisher = try Publisher(remote: site, publicURL: origin.url(.good), deviceFlags: ["--cacert", origin.caFile])
        try publisher.walk()
        // Files of earlier releases stay at their uris (a Cenarius client mid-update may still ask).
        #expect(FileManager.default.fileExists(atPath: site + "/js/app.11111111.js"))
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aThreeReplicaObjectStoreThroughItsS3API() async throws {
        let (store, bucket, publisher) = try await Publisher.onObjectStore("walk")
        let writesBefore = try Self.writes(store, bucket: bucket)
        try publisher.walk()
        #expect(try Self.writes(store, bucket: bucket) > writesBefore)

        // Cache lifetimes per class, as the store serves them to anyone.
        let head = try Self.headers(publisher.publicURL + "/Routes.head")
        #expect(head.contains("cache-control: public, max-age=60, must-revalidate") && head.contains("content-type: application/json"), "\(head)")
        let listed = try publisher.releases()
        let table = try #require(listed.first?["table"] as? String)
        let object = try Self.headers(publisher.publicURL + "/_cenarius/t/\(table).json")
        #expect(object.contains("cache-control: public, max-age=31536000, immutable"), "\(object)")
        let page = try Self.headers(publisher.publicURL + "/index.html")
        #expect(page.contains("content-type: text/html; charset=utf-8"), "\(page)")

        // Fleet from the store's own access log: the devices of this walk are counted by their reports.
        let fleet = try Binary.run(["fleet", store.accessLog, "--json"])
        let devices = (try? fleet.json()["devices"] as? Int) ?? 0
        #expect(fleet.status == 0 && devices >= 2, "\(fleet.stdout) \(fleet.stderr)")

        // The device's-eye check: through the public URL the store serves the head just written.
        let checked = try publisher.run(["publish", try publisher.build(4), "--to", publisher.remote, "--channel", "beta", "--sign-key",
                                         publisher.dir.path("k1.key"), "--json", "--public-url", publisher.publicURL] + publisher.remoteFlags)
        let edge = try #require(try checked.json()["edge"] as? [String: Any], "\(checked.stdout) \(checked.stderr)")
        // The table, the index, the compressed table and a patch per earlier release prune kept.
        #expect(edge["serving"] as? Bool == true && (edge["objectsChecked"] as? Int ?? 0) >= 3 && edge["maxAge"] as? Int == 60, "\(edge)")
        let nowhere = try publisher.run(["publish", try publisher.build(4), "--to", publisher.remote, "--channel", "beta", "--sign-key",
                                         publisher.dir.path("k1.key"), "--public-url", store.publicBase + "/\(bucket)/elsewhere"] + publisher.remoteFlags)
        #expect(nowhere.status == 3 && nowhere.stderr.contains("no head served"), "\(nowhere.stderr)")
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func onlyWhatIsNewIsWrittenAndAStoreThatLostAServerStillTakesARelease() async throws {
        let (store, bucket, publisher) = try await Publisher.onObjectStore("lost")
        try publisher.publish(1)
        #expect(try publisher.sync("release 1")["outcome"] as? String == "committed")

        // B9's count: write requests no more than the objects the publish says it added (plus 10).
        let before = try Self.writes(store, bucket: bucket)
        let second = try publisher.publish(2)
        let uploaded = try #require(second["uploaded"] as? Int)
        #expect(try Self.writes(store, bucket: bucket) - before <= uploaded + 10, "\(second)")
        let unchanged = try Self.writes(store, bucket: bucket)
        try publisher.publish(2, expectUploads: false)
        #expect(try Self.writes(store, bucket: bucket) == unchanged, "an unchanged republish writes nothing")

        // One of the three object servers killed mid-publish, once the store has taken the publish's first write.
        let writesBefore = try Self.writes(store, bucket: bucket)
        let running = Task.detached { try publisher.publish(3)["uploaded"] as? Int ?? 0 }
        let deadline = Date().addingTimeInterval(60)
        while try Self.writes(store, bucket: bucket) == writesBefore, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try store.kill("object2")
        defer { try? store.revive("object2") }
        #expect(try await running.value > 0, "release 3 uploaded with a server killed under it")
        #expect(try publisher.sync("release 3, one object server down")["outcome"] as? String == "committed")
        #expect(try publisher.served() == "<h1>release 3</h1>")
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aPublishKilledAnywhereLeavesTheChannelWholeAndARerunFinishesIt() async throws {
        let (_, _, publisher) = try await Publisher.onObjectStore("kill")
        try publisher.publish(1)
        #expect(try publisher.sync("release 1")["outcome"] as? String == "committed")
        for (n, instant) in zip(2...4, [0.05, 0.15, 0.3]) {
            // Killed somewhere between its first read and its last write.
            let killed = try publisher.run(["publish", try publisher.build(n), "--to", publisher.remote, "--sign-key", publisher.dir.path("k1.key"),
                                            "--release", "r\(n)"] + publisher.remoteFlags, killAfter: instant)
            let synced = try publisher.sync("while release \(n) was cut short")
            #expect(["committed", "unchanged", "not-modified"].contains(synced["outcome"] as? String ?? ""), "\(synced)")
            let shown = try publisher.served()
            // Whole releases only: the one before, or this one when the kill came after its head was
            // written (a small release can be done within the instant, and killed on its way out).
            #expect(shown == "<h1>release \(n - 1)</h1>" || shown == "<h1>release \(n)</h1>", "whole releases only: \(shown) (publish exit \(killed.status))")
            let rerun = try publisher.publish(n, expectUploads: false)
            #expect(rerun["unchanged"] as? Bool == true || (rerun["uploaded"] as? Int ?? 0) > 0)
            #expect(try publisher.sync("release \(n) after the rerun")["outcome"] as? String != nil)
            #expect(try publisher.served() == "<h1>release \(n)</h1>")
        }
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aWrongSecretIsTheUsersToFixAndNothingIsWritten() async throws {
        let store = try await ObjectStore.shared()
        let bucket = "auth-" + String(UUID().uuidString.prefix(8)).lowercased()
        _ = try store.bucket(bucket)
        var environment = store.environment
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let publisher = try Publisher(remote: "s3://\(bucket)/app", publicURL: "", environment: environment, remoteFlags: ["--endpoint", store.endpoint])
        let run = try publisher.run(["publish", try publisher.build(1), "--to", publisher.remote] + publisher.remoteFlags)
        #expect(run.status == 64 && run.stderr.contains("SignatureDoesNotMatch"), "\(run.status): \(run.stderr)")
    }

    /// PUT, POST, COPY and DELETE requests the store has logged from `publish` into `bucket` (other
    /// suites publish into the same store at the same time, each into a bucket of its own).
    static func writes(_ store: ObjectStore, bucket: String) throws -> Int {
        let log = (try? String(contentsOfFile: store.accessLog, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { line in
            line.contains(" cenariusd-publish ") && [" PUT ", " POST ", " DELETE ", " COPY "].contains { line.contains($0 + "/" + bucket + "/") }
        }.count
    }

    /// The response headers of an anonymous HEAD, lower-cased.
    static func headers(_ url: String) throws -> String {
        try Binary.run(["-sI", url], executable: "/usr/bin/curl").stdout.lowercased().replacingOccurrences(of: "\r", with: "")
    }
}
