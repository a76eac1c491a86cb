#if canImport(Glibc)
import Glibc
#endif

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
}
