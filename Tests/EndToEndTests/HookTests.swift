import Foundation
import Testing
import TestOrigin

#if canImport(Glibc)
import Glibc
#endif

/// `--on-switch` commands have a deadline and never outlive the daemon: each runs in its own
/// process group, killed with its children when `--hook-timeout` passes or `serve` stops.
@Suite(.serialized, .awaitsCleanups) struct HookTests {
    /// A slow hook: the shell and a child of it, each writing its pid.
    let slowHook = "echo $$ > hook.pid; sleep 300 & echo $! > child.pid; wait"

    /// Running (not gone, not a zombie waiting for a reaper).
    static func alive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        return state != "Z" && state != "X"
    }

    func start(_ extra: [String]) async throws -> (DaemonProcess, Scratch) {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600",
                                        "--on-switch", slowHook] + extra, cache: dir.path("cache"))
        _ = try daemon.waitUntilServing()
        return (daemon, dir)
    }

    func pids(_ daemon: DaemonProcess) throws -> [Int32] {
        var found: [Int32] = []
        try waitUntil {
            found = ["hook.pid", "child.pid"].compactMap {
                (try? String(contentsOfFile: daemon.workingDirectory + "/" + $0, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
            return found.count == 2
        }
        return found
    }

    @Test func aSlowHookIsGoneWithItsChildrenAfterServeExits() async throws {
        let (daemon, _) = try await start([])
        let running = try pids(daemon)
        #expect(running.count == 2 && running.allSatisfy(Self.alive), "the hook runs after the first commit")
        let stopped = daemon.terminate()
        #expect(stopped.status == 0 && stopped.seconds < 5, "the hook does not hold up the stop")
        try waitUntil { !running.contains(where: Self.alive) }
    }

    @Test func aHookPastItsTimeoutIsKilledWithItsChildren() async throws {
        let (daemon, _) = try await start(["--hook-timeout", "1"])
        defer { _ = daemon.terminate() }
        let running = try pids(daemon)
        try waitUntil { !running.contains(where: Self.alive) }
        var log = ""
        try waitUntil {
            log += daemon.stderr
            return log.contains("did not finish in time")
        }
    }
}
