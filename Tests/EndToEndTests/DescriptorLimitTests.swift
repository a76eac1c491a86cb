import Foundation
import Testing
import TestOrigin

/// G5: the daemon raises its soft descriptor limit, bounds its connections, and never spins when
/// descriptors run out. It runs under systemd's default soft limit of 1024 (with the hard limit
/// 1024 too, so raising cannot help) while more than 1024 idle connections are open to it, as
/// any local process or page can open them; a normal client is still served and the daemon's
/// CPU stays quiet.
@Suite(.serialized, .awaitsCleanups) struct DescriptorLimitTests {
    /// Seconds of CPU the process used so far (user + system).
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func softLimit(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[3])
    }

    /// A child process holding `count` idle connections to `port` (bash's /dev/tcp, then `sleep`
    /// in its place), so that this test process never has more than a thousand descriptors:
    /// Foundation's Process.run, which every end-to-end test calls, reads past the end of glibc's
    /// directory buffer while listing /proc/self/fd when that listing fills it, and crashed the
    /// test process on CI (swiftlang/swift-corelibs-foundation#5472, fixed after Swift 6.3.1).
    static func holdIdleConnections(_ count: Int, port: Int) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/bash")
        holder.arguments = ["-c", "for i in $(seq \(count)); do exec {fd}<>/dev/tcp/127.0.0.1/\(port) || exit 3; done; echo open; exec sleep 3600"]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        let line = String(decoding: out.fileHandleForReading.readData(ofLength: 5), as: UTF8.self)
        guard line.hasPrefix("open") else {
            holder.waitUntilExit()
            throw POSIXError(.ECONNREFUSED)
        }
        return holder
    }

    /// Descriptors a process has open.
    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    // A child of the test holds more than 1024 sockets.
    @Test(.enabled(if: Requirement.inCI || Requirement.descriptors(4096), "needs /usr/bin/prlimit and 4096 open files for the test process"),
          arguments: [1024, 4096])
    func idleConnectionsPastTheLimitLockNobodyOutAndSpinNothing(hard: Int) async throws {
        try #require(Requirement.descriptors(4096), "needs /usr/bin/prlimit and 4096 open files for the test process")
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "hello"])
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"],
                                       cache: dir.path("cache"), wrapper: ["/usr/bin/prlimit", "--nofile=1024:\(hard)"])
        // A daemon locked out at its limit must not outlive a failed test.
        defer { if daemon.process.isRunning { daemon.process.signal(SIGKILL); daemon.process.waitUntilExit() } }
        let http = try daemon.waitUntilServing()
        let pid = daemon.process.processIdentifier
        #expect(Self.softLimit(pid) == hard, "the soft limit is raised to the hard one")

        let holder = try Self.holdIdleConnections(1100, port: daemon.port)
        defer { holder.signal(SIGKILL); holder.waitUntilExit() }
        let idle = Self.openDescriptors(holder.processIdentifier)
        #expect(idle >= 1100, "\(idle) descriptors in the holder")
        // Served while they are open (a fresh connection each time: the shed ones are the stalest).
        try waitUntil(timeout: 20) { (try? http.get("/index.html").status) == 200 }
        #expect(try http.get("/index.html").text == "hello")

        let before = try #require(Self.cpuSeconds(pid))
        let started = Date()
        try await Task.sleep(for: .seconds(3))
        let used = try #require(Self.cpuSeconds(pid)) - before
        let share = used / Date().timeIntervalSince(started)
        print("DescriptorLimitTests: hard \(hard): daemon CPU \(Int(share * 100))% with \(idle) descriptors open to it")
        #expect(share < 0.05, "the daemon spins at the limit: \(Int(share * 100))% CPU")
        #expect(daemon.terminate().status == 0)
    }
}
