#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// Whether NetworkManager says the link is metered (`org.freedesktop.NetworkManager`'s `Metered`
/// property over the system bus): nil when it does not run, does not answer within a second, or
/// does not know. Never a dependency: a device without D-Bus or NetworkManager reads as nil and
/// the `--metered-file` decides.
package enum NetworkManager {
    package static let metered: @Sendable () -> Bool? = {
        guard let value = property("Metered") else { return nil }
        return meaning(value)
    }

    /// NMMetered: 1 yes, 3 guessed yes; 2 no, 4 guessed no; 0 unknown.
    package static func meaning(_ value: UInt32) -> Bool? {
        switch value {
        case 1, 3: true
        case 2, 4: false
        default: nil
        }
    }

    static func busPath() -> String {
        if let address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map({ String(cString: $0) }),
           let path = address.split(separator: ",").first(where: { $0.hasPrefix("unix:path=") }) {
            return String(path.dropFirst("unix:path=".count))
        }
        return "/run/dbus/system_bus_socket"
    }

    static func property(_ name: String) -> UInt32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(busPath().utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return nil }
        // SASL EXTERNAL: the kernel tells the bus who we are; we say the same uid in hex.
        let uid = Array(String(getuid()).utf8).map { byte in String(byte, radix: 16) }.joined()
        guard send(fd, [0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8)), let line = readLine(fd), line.hasPrefix("OK"),
              send(fd, Array("BEGIN\r\n".utf8)) else { return nil }
        let hello = DBusMessage.call(serial: 1, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                     interface: "org.freedesktop.DBus", member: "Hello", strings: [])
        let get = DBusMessage.call(serial: 2, destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
                                   interface: "org.freedesktop.DBus.Properties", member: "Get", strings: ["org.freedesktop.NetworkManager", name])
        guard send(fd, hello + get) else { return nil }
        var buffer: [UInt8] = []
        // Replies and signals (NameAcquired) until the answer to the Get, within a few messages.
        for _ in 0..<16 {
            while DBusMessage.length(buffer[...]).map({ buffer.count < $0 }) ?? true {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return nil }
                buffer += chunk[..<n]
            }
            guard let total = DBusMessage.length(buffer[...]), let message = DBusMessage.parse(buffer[..<total]) else { return nil }
            buffer.removeFirst(total)
            guard message.replySerial == 2 else { continue }
            return message.kind == .methodReturn ? message.variantUInt32 : nil
        }
        return nil
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { FileSystem.writeAll(fd, $0) }
    }

    private static func readLine(_ fd: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 512 {
            guard recv(fd, &byte, 1, 0) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }
}
