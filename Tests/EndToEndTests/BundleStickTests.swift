import Foundation
import Testing
import TestOrigin

/// A stick pulled out mid-import (issue 57, docs/bundles.md), as a reader sees a USB stick's
/// removal: the stick (Requirement.stickFileSystem: vfat, the kernel's or through FUSE, else ext4)
/// stops answering in the middle of a read and its mount goes. A FUSE stick's server is killed
/// (every read after it fails: ENOTCONN); a loop-mounted one has its device's capacity cut to
/// nothing (`losetup -c`: every read fails, EIO); then `umount -l`. `--max-rate` stretches the
/// import over seconds so that the pull lands inside it.
@Suite(.serialized, .awaitsCleanups) struct BundleStickTests {
    /// A stick: its image and where it is mounted.
    struct Stick {
        let image: String
        let mountPoint: String

        func mount() -> Bool { Requirement.mount(stickImage: image, megabytes: 16, at: mountPoint) }

        /// Plugged in again: the image as it was, at the same place.
        func plugBackIn(from pristine: String) -> Bool {
            try? FileManager.default.removeItem(atPath: image)
            guard (try? FileManager.default.copyItem(atPath: pristine, toPath: image)) != nil else { return false }
            return mount()
        }

        /// Pulled out: every read of it fails from now on, and its mount goes.
        func pull() {
            if Requirement.stickFileSystem == "fusefat" {
                // The FUSE server of this image, found by its own arguments.
                for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap({ Int32($0) }) ?? [] {
                    let arguments = (FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                    if arguments.first?.hasSuffix("fusefat") == true && arguments.contains(image) { kill(pid, SIGKILL) }
                }
            } else {
                let device = (try? Binary.run(["-j", image], executable: "/sbin/losetup").stdout.split(separator: ":").first.map(String.init)) ?? nil
                _ = truncate(image, 0)
                if let device { _ = try? Binary.run(["-c", device], executable: "/sbin/losetup") }
            }
            _ = try? Binary.run(["-l", mountPoint], executable: "/bin/umount")
        }
    }

    /// Release 1 on the device (its last visit to the network), release 2 with 3 MB that zstd cannot shrink.
    static func releases(_ publisher: PublishTests.Publisher, device: String) throws {
        try publisher.publish(1)
        #expect(try publisher.sync("release 1", device: device)["outcome"] as? String == "committed")
        let build = try publisher.build(2)
        var noise = SystemRandomNumberGenerator()
        try Data((0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &noise) }).write(to: URL(fileURLWithPath: build + "/img/large.bin"))
        try publisher.publish(2)
    }

    @Test(.enabled(if: Requirement.inCI || Requirement.stickAndNoNetwork, "needs root, fusefat and mkfs.vfat, or a loop device (losetup) and mkfs.ext4"))
    func aStickPulledOutMidImportLeavesTheReleaseWholeAndTheDaemonTakesItWhenItComesBack() throws {
        let stick = try BundleTests.Stick()
        let dir = stick.dir
        print("stick: \(Requirement.stickDescription)")
        try Self.releases(stick.publisher, device: "device")
        let media = dir.path("media"), pristine = dir.path("pristine.img")
        let usb = Stick(image: dir.path("stick.img"), mountPoint: media + "/STICK")
        try #require(usb.mount())
        defer { Requirement.unmount(usb.mountPoint) }
        let bundle = usb.mountPoint + "/app.cenarius.tar"
        #expect(try stick.bundle(["--from", "r1", "--output", bundle]).status == 0)
        // Unmounted and mounted again: nothing of the bundle is left in the page cache, every read goes to the "device".
        Requirement.unmount(usb.mountPoint)
        try FileManager.default.copyItem(atPath: usb.image, toPath: pristine)
        try #require(usb.mount())

        // The command: pulled a second into an import that takes about eight.
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { usb.pull() }
        let started = Date()
        let pulled = try Binary.run(["import", bundle, "--json", "--max-rate", "400000"] + stick.deviceFlags("device"), killAfter: 60)
        print("pulled mid-import: exit \(pulled.status) after \(Date().timeIntervalSince(started)) s: \(pulled.stderr)")
        #expect(pulled.status == 3, "\(pulled.status) \(pulled.stderr)")
        #expect(pulled.stderr.contains(bundle) && pulled.stderr.contains("could not be read"), "\(pulled.stderr)")
        #expect(try stick.served("device") == "<h1>release 1</h1>", "the release in force stays")
        #expect(try Binary.run(["verify"] + stick.deviceFlags("device")).status == 0, "the release in force is whole")
        Requirement.unmount(usb.mountPoint)
        // No report left in the empty mount point, on the device's own disk.
        #expect(pulled.stderr.contains("no report was written") && !FileManager.default.fileExists(atPath: usb.mountPoint + "/" + "cenarius-reports"), "\(pulled.stderr)")

        // The daemon watching the stick's folder: the stick pulled while the daemon imports it, then put back.
        let daemon = try DaemonProcess(["--bundle-dir", media, "--max-rate", "400000"] + Array(stick.deviceFlags("device").dropFirst(2)),
                                       cache: dir.path("device/cache"))
        _ = try daemon.waitUntilServing(healthy: false)
        try #require(usb.plugBackIn(from: pristine))
        // Its import has begun once the download's progress is recorded in the cache.
        try waitUntil { FileManager.default.fileExists(atPath: dir.path("device/cache/downloading.json")) }
        usb.pull()
        try waitUntil { !FileManager.default.fileExists(atPath: dir.path("device/cache/downloading.json")) }
        #expect(daemon.process.isRunning, "the daemon survives the pull")
        #expect(try stick.served("device") == "<h1>release 1</h1>")
        Requirement.unmount(usb.mountPoint)
        // Back in, after a person's few seconds (two of the daemon's looks see it gone): imported.
        sleep(5)
        try #require(usb.plugBackIn(from: pristine))
        try waitUntil(timeout: 60) { (try? stick.served("device")) == "<h1>release 2</h1>" }
        #expect(daemon.terminate().status == 0)
        #expect(try Binary.run(["verify"] + stick.deviceFlags("device")).status == 0)
    }

    /// A full stick takes no report: said, and the import stands (FAT's own "full": its clusters).
    @Test(.enabled(if: Requirement.inCI || Requirement.stickAndNoNetwork, "needs root, fusefat and mkfs.vfat, or a loop device and mkfs.ext4"))
    func aFullStickTakesNoReportAndTheImportStands() throws {
        let stick = try BundleTests.Stick()
        let dir = stick.dir
        try stick.publisher.publish(1)
        let usb = Stick(image: dir.path("stick.img"), mountPoint: dir.path("media/STICK"))
        try #require(usb.mount())
        defer { Requirement.unmount(usb.mountPoint) }
        #expect(try stick.bundle(["--output", usb.mountPoint + "/app.cenarius.tar"]).status == 0)
        // Filled to its last byte.
        #expect(FileManager.default.createFile(atPath: usb.mountPoint + "/filler", contents: nil))
        let filler = try #require(FileHandle(forWritingAtPath: usb.mountPoint + "/filler"))
        let chunk = Data(count: 64 << 10)
        while (try? filler.write(contentsOf: chunk)) != nil {}
        try? filler.close()
        let full = try stick.importing(usb.mountPoint + "/app.cenarius.tar", device: "device")
        #expect(full.status == 0 && full.stderr.contains("report was not written") && (full.stderr.contains("No space left") || full.stderr.contains("no space left")), "\(full.status) \(full.stderr)")
        #expect(try stick.served("device") == "<h1>release 1</h1>")
    }
}
