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

    static func mount(tmpfsAt path: String, mebibytes: Int) -> Bool {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(mebibytes)m", "tmpfs", path]) == 0
    }

    static func unmount(_ path: String) {
        _ = run("/bin/umount", [path])
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
