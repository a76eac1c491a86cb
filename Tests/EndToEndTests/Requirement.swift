import Foundation

/// What a test needs from the machine beyond the build. Outside CI a missing need skips the test visibly
/// (`.enabled(if:)` with the reason, shown in the run); under `CI=true` providing it is the pipeline's job
/// (`.ci/run` installs and permits it), so the test runs anyway and fails where the need is missing.
enum Requirement {
    static let inCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// `mount -t tmpfs` works here (root, and a mount namespace that allows it).
    static let tmpfsMounts: Bool = {
        let point = NSTemporaryDirectory() + "cenarius-mount-probe-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: point) }
        guard mount(tmpfsAt: point, mebibytes: 1) else { return false }
        unmount(point)
        return true
    }()

    /// A small ext4 image can be made and loop-mounted here (root, a loop device, e2fsprogs).
    static let ext4LoopMounts: Bool = {
        let probe = NSTemporaryDirectory() + "cenarius-ext4-probe-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mount(ext4Image: probe + "/fs.img", megabytes: 8, inodes: 1024, at: probe + "/fs") else { return false }
        unmount(probe + "/fs")
        return true
    }()

    /// A USB stick's file system: vfat, by the kernel when it has it, else through FUSE (`fusefat`,
    /// a real FAT file system in user space: no symbolic links, 2 s timestamps); only without
    /// either, ext4, so that the rest of a stick test still runs (this VM's kernel has no vfat).
    static let stickFileSystem: String = {
        let known = (try? String(contentsOfFile: "/proc/filesystems", encoding: .utf8)) ?? ""
        let types = known.split(separator: "\n").map { $0.split(separator: "\t").last.map(String.init) ?? "" }
        if types.contains("vfat") { return "vfat" }
        if types.contains("fuse"), FileManager.default.fileExists(atPath: "/dev/fuse"), FileManager.default.isExecutableFile(atPath: fusefat) { return "fusefat" }
        return "ext4"
    }()

    static let fusefat = "/usr/bin/fusefat"

    /// What the stick is, for a test's output.
    static var stickDescription: String {
        switch stickFileSystem {
        case "vfat": return "vfat (the kernel's)"
        case "fusefat": return "vfat through FUSE (fusefat: this kernel has no vfat in /proc/filesystems)"
        default: return "ext4 (this kernel has no vfat, and fusefat or /dev/fuse is missing: make test-deps installs fusefat)"
        }
    }

    /// A stick image can be made and mounted here (root, a loop device or FUSE, dosfstools or
    /// e2fsprogs), and `unshare --net` makes a network namespace with no route.
    static let stickAndNoNetwork: Bool = {
        let probe = NSTemporaryDirectory() + "cenarius-stick-probe-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mount(stickImage: probe + "/stick.img", megabytes: 8, at: probe + "/stick") else { return false }
        unmount(probe + "/stick")
        return run("/usr/bin/unshare", ["--net", "/bin/true"]) == 0
    }()

    /// `ip netns add` works here (root, iproute2): a LAN of network namespaces and veth pairs.
    static let networkNamespaces: Bool = {
        let probe = "cenarius-netns-probe-\(getpid())"
        guard run("/usr/sbin/ip", ["netns", "add", probe]) == 0 else { return false }
        _ = run("/usr/sbin/ip", ["netns", "del", probe])
        return true
    }()

    /// Makes a stick's image of `megabytes` (`stickFileSystem`) and mounts it at `mountPoint`.
    static func mount(stickImage image: String, megabytes: Int, at mountPoint: String, readOnly: Bool = false) -> Bool {
        let vfat = stickFileSystem != "ext4"
        try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: image) {
            guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(megabytes) << 20) == 0,
                  vfat ? run("/sbin/mkfs.vfat", ["-n", "CENARIUS", image]) == 0 : run("/sbin/mkfs.ext4", ["-q", "-F", image]) == 0 else { return false }
        }
        if stickFileSystem == "fusefat" { return mount(fat: image, at: mountPoint, readOnly: readOnly) }
        let options = (readOnly ? "ro," : "") + "loop" + (vfat ? ",flush" : "")
        return run("/bin/mount", ["-t", stickFileSystem, "-o", options, image, mountPoint]) == 0
    }

    /// fusefat serving `image` at `mountPoint`, in the foreground of a process left running (`umount`
    /// ends it): a daemon would keep the descriptor through which Foundation's Process sees its child
    /// end, and `waitUntilExit` would never return.
    private static func mount(fat image: String, at mountPoint: String, readOnly: Bool) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: fusefat)
        process.arguments = ["-f", "-o", readOnly ? "ro" : "rw+", image, mountPoint]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        for _ in 0..<100 {
            let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
            if mounts.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().first.map(String.init) == mountPoint }) { return true }
            guard process.isRunning else { return false }
            usleep(50_000)
        }
        return false
    }

    /// Makes a file system image of `megabytes` with `inodes` and mounts it at `mountPoint`.
    static func mount(ext4Image image: String, megabytes: Int, inodes: Int, at mountPoint: String) -> Bool {
        try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(megabytes) << 20) == 0 else { return false }
        return run("/sbin/mkfs.ext4", ["-q", "-F", "-N", String(inodes), image]) == 0
            && run("/bin/mount", ["-t", "ext4", "-o", "loop", image, mountPoint]) == 0
    }

    /// OpenStack Swift's servers are installed (make test-deps): scripts/object-store can start the S3 store.
    static let objectStore: Bool = ObjectStore.available

    /// `prlimit` exists and this process may hold `descriptors` open files.
    static func descriptors(_ descriptors: rlim_t) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else { return false }
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        if limit.rlim_cur >= descriptors { return true }
        guard limit.rlim_max >= descriptors else { return false }
        limit.rlim_cur = descriptors
        return setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
    }

    static func mount(tmpfsAt path: String, mebibytes: Int) -> Bool {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // mode=0755: a fresh tmpfs is 1777, and a cache others can write is refused (G5).
        return run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(mebibytes)m,mode=0755", "tmpfs", path]) == 0
    }

    static func unmount(_ path: String) {
        _ = run("/bin/umount", [path])
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
