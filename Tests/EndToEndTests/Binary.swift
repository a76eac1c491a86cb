import Foundation
import Synchronization
import TestOrigin

/// Runs the built `cenariusd` as a user would, capturing its output and exit code.
struct Binary {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
            guard let dictionary = object as? [String: Any] else { throw CocoaError(.coderReadCorrupt) }
            return dictionary
        }
    }

    /// A remote nothing listens on (port 1): an origin taken down, whose own port another test's
    /// origin may be given at once (a sync there would succeed from it).
    static let downRemote = "http://127.0.0.1:1"

    /// `cenariusd` sits next to the test bundle in the build folder.
    static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if dir.pathExtension == "xctest" { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("cenariusd").path
    }

    /// The binary started and left running, its output discarded: for a test that kills it.
    static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// `killAfter`: a watchdog for tests of things that must not hang; a run it had to end
    /// reports status -1 (instead of hanging the suite). `executable`: another program that runs
    /// `cenariusd` (strace).
    static func run(_ arguments: [String], environment: [String: String] = [:], cwd: String? = nil, killAfter: Double? = nil,
                    executable: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CENARIUS_") }
        env["XDG_CONFIG_HOME"] = "/nonexistent-config-home"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let killed = Mutex(false)
        if let killAfter {
            DispatchQueue.global().asyncAfter(deadline: .now() + killAfter) {
                guard process.isRunning else { return }
                killed.withLock { $0 = true }
                process.signal(SIGKILL)
            }
        }
        // Read before waiting so a large output cannot fill the pipe and block the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: killed.withLock { $0 } ? -1 : process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// A scratch folder for one test.
struct Scratch {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "cenarius-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// A folder removed when the test ends (its suite has `.awaitsCleanups`).
    static func forTest() throws -> Scratch {
        let dir = try Scratch()
        Cleanups.add { dir.remove() }
        return dir
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: path(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func read(_ relative: String) -> String? { try? String(contentsOfFile: path(relative), encoding: .utf8) }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}
