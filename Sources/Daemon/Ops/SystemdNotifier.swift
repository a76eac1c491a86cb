#if canImport(Glibc)
import Glibc
#endif
import ResourceCache
import RouteSync

/// sd_notify without libsystemd: one datagram to the socket named by `NOTIFY_SOCKET`
/// (an abstract socket when it starts with `@`). Silent when not run under systemd.
enum SystemdNotifier {
    static func notify(_ state: String) {
        guard let raw = getenv("NOTIFY_SOCKET") else { return }
        var path = Array(String(cString: raw).utf8)
        guard !path.isEmpty, path.count < 108 else { return }
        if path[0] == UInt8(ascii: "@") { path[0] = 0 }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.enumerated() { buffer[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sockaddrPointer, length) }
            }
        }
    }

    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC`, when systemd asks this process
    /// for it (`WATCHDOG_PID`, when set, names this process); nil: no watchdog.
    static func watchdogPeriod(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> Double? {
        guard environment("NOTIFY_SOCKET") != nil, let text = environment("WATCHDOG_USEC"), let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment("WATCHDOG_PID"), Int32(pid) != getpid() { return nil }
        return Double(usec) / 2_000_000
    }

    /// `RELOADING=1` as systemd 253 and later want it: with the monotonic time of the reload.
    static var reloading: String {
        "RELOADING=1\nMONOTONIC_USEC=\(UInt64(FileSystem.monotonic() * 1_000_000))"
    }

    /// `STATUS=` after a sync: what `systemctl status` shows.
    static func status(_ result: Result<SyncReport, CenariusError>) -> String {
        switch result {
        case .success(let report):
            let generation = report.generation.map { "generation \($0)" } ?? "the preset"
            return "last sync: \(report.outcome.rawValue), serving \(generation)"
        case .failure(let error):
            return "last sync failed (exit \(error.code.rawValue)): \(error.message)"
        }
    }
}
