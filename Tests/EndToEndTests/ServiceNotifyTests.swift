import Foundation
import Testing
import TestOrigin

/// systemd's side of the daemon, with a real `NOTIFY_SOCKET` of the test's own: the datagrams of
/// a start, a reload and a stop; the watchdog that stops when the scheduler is stuck; journal
/// priorities on every log line.
@Suite(.serialized, .awaitsCleanups) struct ServiceNotifyTests {
    /// A datagram socket bound in a scratch folder, read with a timeout.
    final class NotifySocket {
        let path: String
        let fd: Int32

        init(in dir: Scratch) throws {
            path = dir.path("notify")
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, byte) in bytes.enumerated() { buffer[i] = byte } }
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
            var wait = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// The datagrams that arrive within `seconds`.
        func read(for seconds: Double) -> [String] {
            var messages: [String] = []
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n > 0 { messages.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
            }
            return messages
        }

        /// Datagrams until one satisfies `condition`, or nil after `seconds`.
        func read(until condition: @escaping (String) -> Bool, within seconds: Double = 30) -> [String]? {
            read(untilAll: [condition], within: seconds)
        }

        /// Datagrams until each condition was met by one of them (in any order), or nil after `seconds`.
        func read(untilAll conditions: [(String) -> Bool], within seconds: Double = 30) -> [String]? {
            var messages: [String] = []
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                messages += read(for: 0.1)
                if conditions.allSatisfy({ messages.contains(where: $0) }) { return messages }
            }
            return nil
        }
    }

    @Test func aStartAReloadAndAStopAreToldWithWatchdogPingsBetween() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        let notify = try NotifySocket(in: dir)
        let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"], cache: dir.path("cache"),
                                       environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"])
        let start = try #require(notify.read(untilAll: [{ $0.hasPrefix("READY=1") }, { $0.contains("STATUS=last sync") }]),
                                 "READY=1, and the first sync's outcome in STATUS=")
        #expect(start.contains { $0.hasPrefix("READY=1\nSTATUS=serving http://") }, "\(start)")
        #expect(start.contains { $0 == "STATUS=last sync: committed, serving generation 1" }, "\(start)")
        // Pings every 0.2 s while the loops and the scheduler are alive (15 in 3 s on an idle machine).
        let pings = notify.read(for: 3).filter { $0 == "WATCHDOG=1" }
        #expect(pings.count >= 3, "\(pings.count) pings in 3 s")

        daemon.process.signal(SIGHUP)
        let reload = try #require(notify.read(until: { $0.hasPrefix("READY=1") }))
        let reloading = try #require(reload.firstIndex { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") }, "\(reload)")
        let ready = try #require(reload.firstIndex { $0.hasPrefix("READY=1") })
        #expect(reloading < ready && reload[ready].contains("STATUS=configuration reloaded"), "\(reload)")

        daemon.process.signal(SIGTERM)
        let stop = try #require(notify.read(until: { $0 == "STOPPING=1" }, within: 10))
        #expect(stop.last == "STOPPING=1")
        daemon.process.waitUntilExit()
        #expect(daemon.process.terminationStatus == 0)
        // Pings end with the daemon.
        #expect(notify.read(for: 0.5).isEmpty)
    }

    /// A sync that shows no progress past the stall limit (here: behind the cache's writer lock,
    /// which another process holds) stops the pings, so systemd restarts the daemon; once the
    /// sync moves again, so do the pings.
    @Test func aStuckSchedulerStopsTheWatchdogPings() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        try FileManager.default.createDirectory(atPath: dir.path("cache"), withIntermediateDirectories: true)
        let lock = open(dir.path("cache/lock"), O_RDWR | O_CREAT, 0o644)
        #expect(flock(lock, LOCK_EX) == 0)
        defer { close(lock) }
        let notify = try NotifySocket(in: dir)
        // --timeout 3 and pings every 0.5 s: stuck after 4 × 3 + 3 × 0.5 = 13.5 s without progress,
        // counted from the sync's start (at launch), whenever the daemon gets to READY on a loaded
        // machine: the early window ends a second and a half before that, however late READY came.
        let launched = Date()
        let daemon = try Device(in: dir).serve(remote: origin.url, ["--timeout", "3"], environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])
        _ = try #require(notify.read(until: { $0.contains("READY=1") }))
        let window = min(3, 12 - Date().timeIntervalSince(launched))
        let early = notify.read(for: window).filter { $0 == "WATCHDOG=1" }
        #expect(window < 2 || early.count >= 2, "pings in the \(window) s before the stall limit: \(early.count)")
        _ = notify.read(for: max(0, 15 - Date().timeIntervalSince(launched)))
        let stuck = notify.read(for: 3).filter { $0 == "WATCHDOG=1" }
        #expect(stuck.isEmpty, "\(stuck.count) pings while the sync was stuck")

        flock(lock, LOCK_UN)
        let resumed = try #require(notify.read(until: { $0 == "WATCHDOG=1" }, within: 10), "pings resume once the sync moves")
        #expect(resumed.contains { $0.contains("STATUS=last sync: committed") } || resumed.last == "WATCHDOG=1")
        #expect(daemon.terminate().status == 0)
        #expect(daemon.stderr.contains("stuck"))
    }

    @Test func underTheJournalEveryLineCarriesItsPriority() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        for format in ["text", "json"] {
            let cache = dir.path("cache-" + format)
            let daemon = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600", "--log-format", format,
                                            "--remote", origin.url + "/missing-mirror"], cache: cache, journal: true)
            _ = try daemon.waitUntilServing()
            #expect(daemon.terminate().status == 0)
            let lines = daemon.stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines { #expect(line.range(of: #"^<[2-7]>"#, options: .regularExpression) != nil, "\(format): \(line)") }
            #expect(lines.contains { $0.hasPrefix("<6>") }, "\(format): info lines are <6>")
        }
        // Without JOURNAL_STREAM (or with one naming another stream) lines stay as they were.
        let plain = try DaemonProcess(["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600"], cache: dir.path("cache-plain"),
                                      environment: ["JOURNAL_STREAM": "1:1"])
        _ = try plain.waitUntilServing()
        #expect(plain.terminate().status == 0)
        #expect(!plain.stderr.contains("<6>"))
    }
}
