import Foundation
import Testing
import TestOrigin

/// Offline bundles (issue 57, docs/bundles.md): `bundle` made from what `publish` wrote (a folder,
/// the three-replica object store), `import` of a file and a folder on devices that never reach
/// the origin, the reports left beside the bundle, every bad bundle refused with nothing applied,
/// a kill during an import, and the daemon picking up a bundle that appears in a watched folder.
@Suite(.serialized, .awaitsCleanups) struct BundleTests {
    /// A publisher's folder remote, devices that follow it only through bundles.
    struct Stick {
        let publisher: PublishTests.Publisher

        init(remote: String? = nil, publicURL: String? = nil, environment: [String: String] = [:], remoteFlags: [String] = []) throws {
            let dir = try Scratch.forTest()
            let folder = remote ?? dir.path("www")
            publisher = try PublishTests.Publisher(remote: folder, publicURL: publicURL ?? "file://" + folder, environment: environment, remoteFlags: remoteFlags)
        }

        var dir: Scratch { publisher.dir }

        func bundle(_ arguments: [String]) throws -> Binary.Run {
            try publisher.run(["bundle", publisher.remote] + arguments + publisher.remoteFlags)
        }

        /// A device that never names a remote: everything it holds came from bundles (or its first sync, where a test says so).
        func deviceFlags(_ device: String) -> [String] {
            Device(device, in: dir).flags + ["--public-key", dir.path("k1.pub"),
             "--device-id", device + "-" + dir.root.suffix(12)]
        }

        func importing(_ bundle: String, device: String, environment: [String: String] = [:]) throws -> Binary.Run {
            try Binary.run(["import", bundle, "--json"] + deviceFlags(device), environment: environment)
        }

        func served(_ device: String) throws -> String { try publisher.served(device) }

        /// Releases 1 and 2 published, `device` left on release 1 (its last visit to the network).
        func twoReleases(leaving device: String) throws {
            try publisher.publish(1)
            #expect(try publisher.sync("release 1", device: device)["outcome"] as? String == "committed")
            try publisher.publish(2)
        }

        func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }

        /// The bytes of the folder's files (not its directories' own blocks, 4 KiB each here: they
        /// were two thirds of a delta bundle's "size", and the file system's, not the bundle's).
        func folderSize(_ path: String) -> Int {
            let enumerator = FileManager.default.enumerator(atPath: path)
            var total = 0
            while let relative = enumerator?.nextObject() as? String {
                if enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular { total += size(path + "/" + relative) }
            }
            return total
        }
    }

    @Test func aFirstInstallAndADeltaFromAFolderDestinationImportedFromAFileAndAFolder() throws {
        let stick = try Stick()
        let dir = stick.dir
        try stick.twoReleases(leaving: "old")

        // A first install as one tar, readable with tar(1), the manifest first.
        let made = try stick.bundle(["--output", dir.path("stick/first.cenarius.tar"), "--json"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try made.json()["firstInstall"] as? Bool == true)
        let listed = try Binary.run(["-tf", dir.path("stick/first.cenarius.tar")], executable: "/usr/bin/tar")
        let names = listed.stdout.split(separator: "\n").map(String.init)
        #expect(listed.status == 0 && names.first == "cenarius-bundle.json" && names.contains("Routes.head") && names.contains { $0.hasPrefix("_cenarius/pack/") },
                "\(listed.stdout) \(listed.stderr)")
        #expect(!names.contains { $0.hasPrefix("_cenarius/z/") }, "a first install carries the solid pack, not every form: \(names)")
        // B12: the solid pack, the head and the table (its compressed form), and tar's headers.
        let carried = names.filter { $0 != "cenarius-bundle.json" }.reduce(0) { $0 + stick.size(stick.publisher.remote + "/" + $1) }
        let tarSize = stick.size(dir.path("stick/first.cenarius.tar"))
        #expect(tarSize <= Int(Double(carried) * 1.02) + 512 * (2 * names.count + 4), "bundle \(tarSize) B for \(carried) B of objects")
        print("B12 first install: bundle \(tarSize) B, objects carried \(carried) B")

        // A new device installs it with no network and no remote named; its report lands beside the bundle.
        let first = try stick.importing(dir.path("stick/first.cenarius.tar"), device: "fresh")
        #expect(first.status == 0, "\(first.stderr)")
        let report = try first.json()
        #expect(report["outcome"] as? String == "committed", "\(report)")
        #expect(try stick.served("fresh") == "<h1>release 2</h1>")
        let imported = try #require(report["imported"] as? [String: Any])
        let reportFile = try #require(imported["report"] as? String)
        #expect(reportFile.hasPrefix(dir.path("stick/cenarius-reports/")))
        let line = try #require(dir.read(String(reportFile.dropFirst(dir.root.count + 1))))
        #expect(line.contains("\"report\":\"device=") && line.contains("why=current") && line.contains("\"outcome\":\"committed\""), "\(line)")

        // Run twice, as a technician would: nothing to do, and a second report, the first one kept.
        let again = try stick.importing(dir.path("stick/first.cenarius.tar"), device: "fresh")
        #expect(again.status == 0 && (try? again.json()["outcome"] as? String) == "unchanged", "\(again.stdout) \(again.stderr)")
        let reports = try FileManager.default.contentsOfDirectory(atPath: dir.path("stick/cenarius-reports"))
        #expect(reports.count == 2 && FileManager.default.fileExists(atPath: reportFile), "\(reports)")
        // `fleet` reads the reports as it reads an access log: one device.
        let fleet = try Binary.run(["fleet", "--json"] + reports.map { dir.path("stick/cenarius-reports/" + $0) })
        #expect(fleet.status == 0 && (try? fleet.json()["devices"] as? Int) == 1, "\(fleet.stdout) \(fleet.stderr)")

        // A delta for devices on release 1, as a folder on the stick: a remote in its own right.
        let delta = try stick.bundle(["--from", "r1", "--out-dir", dir.path("stick/delta"), "--json"])
        #expect(delta.status == 0, "\(delta.stderr)")
        let deltaSize = stick.folderSize(dir.path("stick/delta"))
        #expect(deltaSize * 2 < tarSize, "a delta bundle (\(deltaSize) B) is a fraction of the first install (\(tarSize) B)")
        print("B12 delta: bundle folder \(deltaSize) B against \(tarSize) B for a first install")
        let started = Date()
        let applied = try stick.importing(dir.path("stick/delta"), device: "old")
        print("B12 delta import: \(Date().timeIntervalSince(started)) s (the whole process)")
        #expect(applied.status == 0 && (try? applied.json()["outcome"] as? String) == "committed", "\(applied.stdout) \(applied.stderr)")
        #expect(try stick.served("old") == "<h1>release 2</h1>")
        #expect(try Binary.run(["verify"] + stick.deviceFlags("old")).status == 0)
        // The delta again, as a technician would: it holds the release's index only in the table's
        // patch from release 1, and the device is on release 2 now, so nothing to do.
        let deltaAgain = try stick.importing(dir.path("stick/delta"), device: "old")
        #expect(deltaAgain.status == 0 && (try? deltaAgain.json()["outcome"] as? String) == "unchanged", "\(deltaAgain.stdout) \(deltaAgain.stderr)")
        // Made again into the same folder, for the next release: that release alone, nothing of the last.
        try stick.publisher.publish(3)
        let next = try stick.bundle(["--from", "r2", "--out-dir", dir.path("stick/delta")])
        #expect(next.status == 0, "\(next.stderr)")
        let packs = try FileManager.default.contentsOfDirectory(atPath: dir.path("stick/delta/_cenarius/pack"))
        #expect(packs.count == 1, "\(packs)")
        // The same folder, synced as any remote.
        let synced = try Binary.run(["sync", "--json", "--remote", "file://" + dir.path("stick/delta")] + stick.deviceFlags("old"))
        #expect(synced.status == 0, "\(synced.stderr)")
    }

    @Test func everyBadBundleIsRefusedWithNothingApplied() throws {
        let stick = try Stick()
        let dir = stick.dir
        try stick.twoReleases(leaving: "device")
        #expect(try stick.bundle(["--output", dir.path("stick/r2.tar")]).status == 0)
        let good = try #require(FileManager.default.contents(atPath: dir.path("stick/r2.tar")))

        func refused(_ path: String, _ status: Int32, _ words: String, _ what: String) throws {
            let run = try stick.importing(path, device: "device")
            #expect(run.status == status && run.stderr.contains(words), "\(what): \(run.status) \(run.stderr)")
            #expect(try stick.served("device") == "<h1>release 1</h1>", "\(what): nothing applied")
        }
        // Truncated at a member's middle, and exactly before the archive's end.
        try good.prefix(good.count * 6 / 10).write(to: URL(fileURLWithPath: dir.path("stick/cut.tar")))
        try refused(dir.path("stick/cut.tar"), 4, "truncated", "cut short")
        // Refused, and reported: the device says it failed, and why.
        let reported = try FileManager.default.contentsOfDirectory(atPath: dir.path("stick/cenarius-reports"))
        let failure = reported.compactMap { dir.read("stick/cenarius-reports/" + $0) }.first { $0.contains("cut.tar") } ?? ""
        #expect(failure.contains("\"outcome\":\"failed\"") && failure.contains("\"error\":4"), "\(reported) \(failure)")
        try good.prefix(good.count - 1024).write(to: URL(fileURLWithPath: dir.path("stick/end.tar")))
        try refused(dir.path("stick/end.tar"), 4, "truncated", "no end mark")
        // A bit flipped in a header, and one in the pack's data.
        var header = good
        header[130] ^= 0x01
        try header.write(to: URL(fileURLWithPath: dir.path("stick/header.tar")))
        try refused(dir.path("stick/header.tar"), 4, "checksum", "a header's bit")
        var data = good
        data[good.count - 4096] ^= 0x01
        try data.write(to: URL(fileURLWithPath: dir.path("stick/data.tar")))
        try refused(dir.path("stick/data.tar"), 4, "damaged", "a data bit")
        // A FIFO and a link planted where a bundle is looked for: refused, never waited on.
        #expect(mkfifo(dir.path("stick/fifo.tar"), 0o644) == 0)
        try refused(dir.path("stick/fifo.tar"), 4, "FIFO", "a FIFO")
        try FileManager.default.createSymbolicLink(atPath: dir.path("stick/link.tar"), withDestinationPath: dir.path("stick/r2.tar"))
        try refused(dir.path("stick/link.tar"), 4, "symbolic link", "a link")

        // Another channel's bundle, and one made for another base.
        try stick.publisher.publish(3, ["--channel", "beta"])
        #expect(try stick.bundle(["--channel", "beta", "--output", dir.path("stick/beta.tar")]).status == 0)
        try refused(dir.path("stick/beta.tar"), 2, "channel beta", "another channel")
        // Both channels in one bundle: each device takes its own channel's release.
        #expect(try stick.bundle(["--channel", "default", "--channel", "beta", "--output", dir.path("stick/both.tar")]).status == 0)
        let beta = try Binary.run(["import", dir.path("stick/both.tar"), "--channel", "beta"] + stick.deviceFlags("beta"))
        #expect(beta.status == 0, "\(beta.stderr)")
        let shown = try stick.served("beta")
        #expect(shown == "<h1>release 3</h1>", "\(shown) \(beta.stdout)")
        try stick.publisher.publish(4)
        #expect(try stick.bundle(["--from", "r2", "--output", dir.path("stick/from-r2.tar")]).status == 0)
        try refused(dir.path("stick/from-r2.tar"), 2, "devices on table", "another base")

        // Applied, then an older release's bundle: versions never go back.
        #expect(try stick.bundle(["--from", "r1", "--output", dir.path("stick/r4.tar")]).status == 0)
        #expect(try stick.importing(dir.path("stick/r4.tar"), device: "device").status == 0)
        #expect(try stick.served("device") == "<h1>release 4</h1>")
        let older = try stick.importing(dir.path("stick/r2.tar"), device: "device")
        #expect(older.status == 4, "an older release: \(older.stderr)")
        #expect(try stick.served("device") == "<h1>release 4</h1>")

        // A signature that expired on the way.
        try stick.publisher.publish(5, ["--expires", "1s"])
        #expect(try stick.bundle(["--output", dir.path("stick/expiring.tar")]).status == 0)
        sleep(2)
        let expired = try stick.importing(dir.path("stick/expiring.tar"), device: "fresh")
        #expect(expired.status == 4 && expired.stderr.contains("expired"), "\(expired.stderr)")

        // A stick that takes no report (a file planted where the reports go): said, and the import stands.
        try dir.write("ro/cenarius-reports", "not a folder")
        #expect(try stick.bundle(["--release", "r4", "--output", dir.path("ro/r4.tar")]).status == 0)
        let planted = try stick.importing(dir.path("ro/r4.tar"), device: "second")
        #expect(planted.status == 0 && planted.stderr.contains("report was not written"), "\(planted.stderr)")
        #expect(try stick.served("second") == "<h1>release 4</h1>")
    }

    @Test func aKillDuringAnImportLeavesTheReleaseWhole() throws {
        let stick = try Stick()
        let dir = stick.dir
        try stick.twoReleases(leaving: "device")
        #expect(try stick.bundle(["--from", "r1", "--output", dir.path("stick/r2.tar")]).status == 0)
        for effect in ["downloads", "generationBuilt", "committed"] {
            let killed = try stick.importing(dir.path("stick/r2.tar"), device: "device", environment: ["CENARIUS_TEST_KILL_BEFORE": effect])
            #expect(killed.status != 0, "killed before \(effect)")
            #expect(try stick.served("device") == "<h1>release 1</h1>", "whole, before \(effect)")
            #expect(try Binary.run(["verify"] + stick.deviceFlags("device")).status == 0)
        }
        let applied = try stick.importing(dir.path("stick/r2.tar"), device: "device")
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(try stick.served("device") == "<h1>release 2</h1>")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.path("device/cache/import")))?.isEmpty ?? true, "nothing left unpacked")
    }

    @Test func theDaemonImportsABundleThatAppearsInAWatchedFolderAndOneItIsAskedFor() throws {
        let stick = try Stick()
        let dir = stick.dir
        try stick.publisher.publish(1)
        #expect(try stick.bundle(["--output", dir.path("r1.tar")]).status == 0)
        try stick.publisher.publish(2)
        #expect(try stick.bundle(["--from", "r1", "--out-dir", dir.path("r2")]).status == 0)
        try FileManager.default.createDirectory(atPath: dir.path("media"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.path("device"), withIntermediateDirectories: true)
        let daemon = try DaemonProcess(["--bundle-dir", dir.path("media")] + Array(stick.deviceFlags("device").dropFirst(2)), cache: dir.path("device/cache"))
        _ = try daemon.waitUntilServing(healthy: false)
        // A stick "mounted" under the watched folder, holding the first install.
        try FileManager.default.createDirectory(atPath: dir.path("media/user/STICK"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: dir.path("r1.tar"), toPath: dir.path("media/user/STICK/app.cenarius.tar"))
        let started = Date()
        try waitUntil { (try? stick.served("device")) == "<h1>release 1</h1>" }
        print("bundle-dir: imported \(Date().timeIntervalSince(started)) s after it appeared")
        try waitUntil { ((try? FileManager.default.contentsOfDirectory(atPath: dir.path("media/user/STICK/cenarius-reports"))) ?? []).count == 1 }
        // The command line asks the daemon, which applies the delta folder.
        let asked = try Binary.run(["import", dir.path("r2"), "--json"] + stick.deviceFlags("device"))
        #expect(asked.status == 0 && (try? asked.json()["outcome"] as? String) == "committed", "\(asked.stdout) \(asked.stderr)")
        #expect(try stick.served("device") == "<h1>release 2</h1>")
        // Once per bundle: the stick's bundle is not imported again.
        sleep(5)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dir.path("media/user/STICK/cenarius-reports"))) ?? []).count == 1)
        #expect(daemon.terminate().status == 0)
        // Restarted with the stick still in: remembered in the cache, not imported nor reported again;
        // a new bundle put on the stick still is.
        let restarted = try DaemonProcess(["--bundle-dir", dir.path("media")] + Array(stick.deviceFlags("device").dropFirst(2)), cache: dir.path("device/cache"))
        _ = try restarted.waitUntilServing(healthy: false)
        sleep(6)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dir.path("media/user/STICK/cenarius-reports"))) ?? []).count == 1)
        try stick.publisher.publish(3)
        #expect(try stick.bundle(["--from", "r2", "--output", dir.path("r3.tar")]).status == 0)
        try FileManager.default.copyItem(atPath: dir.path("r3.tar"), toPath: dir.path("media/user/STICK/r3.cenarius.tar"))
        try waitUntil { (try? stick.served("device")) == "<h1>release 3</h1>" }
        try waitUntil { ((try? FileManager.default.contentsOfDirectory(atPath: dir.path("media/user/STICK/cenarius-reports"))) ?? []).count == 2 }
        #expect(restarted.terminate().status == 0)
    }

    @Test func aBundleFromAnHTTPRemote() async throws {
        let stick = try Stick()
        let dir = stick.dir
        try stick.twoReleases(leaving: "old")
        let first = try #require(try stick.publisher.releases().last?["table"] as? String)
        // The remote as a web server serves it: every file of the folder, nothing listed.
        let origin = try await TestOrigin()
        let enumerator = FileManager.default.enumerator(atPath: stick.publisher.remote)
        while let relative = enumerator?.nextObject() as? String {
            if let data = FileManager.default.contents(atPath: stick.publisher.remote + "/" + relative), !relative.hasPrefix(".") {
                origin.put(relative, Array(data))
            }
        }
        let made = try Binary.run(["bundle", origin.url, "--output", dir.path("http.tar")])
        #expect(made.status == 0, "\(made.stderr)")
        let delta = try Binary.run(["bundle", origin.url, "--from", first, "--output", dir.path("http-delta.tar")])
        #expect(delta.status == 0, "\(delta.stderr)")
        await origin.shutdown()
        #expect(try stick.importing(dir.path("http.tar"), device: "fresh").status == 0)
        #expect(try stick.served("fresh") == "<h1>release 2</h1>")
        #expect(try stick.importing(dir.path("http-delta.tar"), device: "old").status == 0)
        #expect(try stick.served("old") == "<h1>release 2</h1>")
    }

    /// On vfat (the kernel's, else through FUSE), else on ext4 (Requirement.stickFileSystem).
    @Test(.enabled(if: Requirement.inCI || Requirement.stickAndNoNetwork, "needs root, a loop device, mkfs.vfat or mkfs.ext4, and unshare --net"))
    func aStickAppliedInANamespaceWithNoNetworkThenReadOnly() throws {
        let stick = try Stick()
        let dir = stick.dir
        try stick.publisher.publish(1)
        try stick.publisher.publish(2)
        let image = dir.path("stick.img"), mountPoint = dir.path("media/CENARIUS")
        try #require(Requirement.mount(stickImage: image, megabytes: 16, at: mountPoint))
        defer { Requirement.unmount(mountPoint) }
        print("stick: \(Requirement.stickDescription)")
        #expect(try stick.bundle(["--output", mountPoint + "/app.cenarius.tar"]).status == 0)
        // The device names its origin, and is where nothing can be reached: no route, not even loopback up.
        let offline = try Binary.run(["--net", Binary.path, "import", mountPoint + "/app.cenarius.tar", "--json", "--remote", "http://127.0.0.1:8701"]
                                     + stick.deviceFlags("device"), executable: "/usr/bin/unshare")
        #expect(offline.status == 0 && (try? offline.json()["outcome"] as? String) == "committed", "\(offline.stdout) \(offline.stderr)")
        #expect(try stick.served("device") == "<h1>release 2</h1>")
        let reports = try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/cenarius-reports")
        #expect(reports.count == 1, "the report is on the stick: \(reports)")
        // The stick again, read-only: the import stands, the report is a warning.
        Requirement.unmount(mountPoint)
        try #require(Requirement.mount(stickImage: image, megabytes: 16, at: mountPoint, readOnly: true))
        let readOnly = try stick.importing(mountPoint + "/app.cenarius.tar", device: "second")
        #expect(readOnly.status == 0 && readOnly.stderr.contains("report was not written"), "\(readOnly.stderr)")
        #expect(try stick.served("second") == "<h1>release 2</h1>")
    }
}

/// In PublishTests' serialized suite: its write counts read the shared store's access log, which a
/// publish of this test running beside them would add to.
extension PublishTests {
    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aBundleFromTheThreeReplicaObjectStore() async throws {
        let store = try await ObjectStore.shared()
        let bucket = "bundle-" + String(UUID().uuidString.prefix(8)).lowercased()
        let base = try store.bucket(bucket)
        let stick = try BundleTests.Stick(remote: "s3://\(bucket)/app", publicURL: base + "/app", environment: store.environment, remoteFlags: ["--endpoint", store.endpoint])
        try stick.twoReleases(leaving: "old")
        #expect(try stick.bundle(["--output", stick.dir.path("first.tar")]).status == 0)
        #expect(try stick.bundle(["--from", "r1", "--output", stick.dir.path("delta.tar")]).status == 0)
        #expect(try stick.importing(stick.dir.path("first.tar"), device: "fresh").status == 0)
        #expect(try stick.served("fresh") == "<h1>release 2</h1>")
        #expect(try stick.importing(stick.dir.path("delta.tar"), device: "old").status == 0)
        #expect(try stick.served("old") == "<h1>release 2</h1>")
    }
}
