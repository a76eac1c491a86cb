#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// A connection to the system bus, used from one thread at a time: SASL EXTERNAL, Hello, then
/// calls that wait for their reply (signals that arrive meanwhile are kept for `next`). Every
/// wait has a deadline: a bus that stops answering costs that, never a hung daemon.
package final class DBusConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var serial: UInt32 = 1
    private var signals: [DBusMessage] = []

    package enum Next {
        case message(DBusMessage), timeout, closed
    }

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`'s `unix:path=`, else the standard socket), or the
    /// bus at `path`; nil when there is none or it does not let us in within `timeout` seconds.
    package init?(path: String? = nil, timeout: Int) {
        guard let fd = Self.authenticated(path ?? Self.systemBusPath(), timeout: timeout) else { return nil }
        self.fd = fd
        // Hello's reply (our unique name) is not needed: it is passed over like any other.
        guard send(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                   member: "Hello", body: DBusWriter()) != nil else { return nil }
    }

    /// A socket connected to the bus at `path` past SASL EXTERNAL (the kernel tells the bus who we
    /// are; we say the same uid in hex), or nil, with nothing left open.
    private static func authenticated(_ path: String, timeout: Int) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { close(fd); return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let uid = Array(String(getuid()).utf8).map { byte in String(byte, radix: 16) }.joined()
        guard connected == 0, write(fd, [0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8)), let line = readLine(fd), line.hasPrefix("OK"),
              write(fd, Array("BEGIN\r\n".utf8)) else { close(fd); return nil }
        return fd
    }

    deinit { close(fd) }

    static func systemBusPath() -> String {
        if let address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map({ String(cString: $0) }),
           let path = address.split(separator: ",").first(where: { $0.hasPrefix("unix:path=") }) {
            return String(path.dropFirst("unix:path=".count))
        }
        return "/run/dbus/system_bus_socket"
    }

    /// Sends a call; its serial, or nil when the bus is gone.
    package func send(destination: String, path: String, interface: String, member: String, body: DBusWriter) -> UInt32? {
        serial += 1
        let message = DBusMessage.call(serial: serial, destination: destination, path: path, interface: interface, member: member, body: body)
        return Self.write(fd, message) ? serial : nil
    }

    /// Calls and waits up to `timeout` seconds for the reply (a return or an error); nil: none came.
    package func call(destination: String, path: String, interface: String, member: String, body: DBusWriter = DBusWriter(),
                      timeout: Double) -> DBusMessage? {
        guard let sent = send(destination: destination, path: path, interface: interface, member: member, body: body) else { return nil }
        let deadline = Self.monotonic() + timeout
        while true {
            guard case .message(let message) = read(until: deadline) else { return nil }
            if message.replySerial == sent, message.kind == .methodReturn || message.kind == .error { return message }
            if message.kind == .signal || message.kind == .methodCall { signals.append(message) }
        }
    }

    /// `AddMatch(rule)`: true when the bus took it.
    package func addMatch(_ rule: String) -> Bool {
        var body = DBusWriter()
        body.string(rule)
        return call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "AddMatch", body: body, timeout: 5)?.kind == .methodReturn
    }

    /// The next signal or call to us (kept ones first), waiting up to `timeout` seconds.
    package func next(timeout: Double) -> Next {
        if !signals.isEmpty { return .message(signals.removeFirst()) }
        let deadline = Self.monotonic() + timeout
        while true {
            let next = read(until: deadline)
            guard case .message(let message) = next else { return next }
            if message.kind == .signal || message.kind == .methodCall { return next }
        }
    }

    private func read(until deadline: Double) -> Next {
        while true {
            if let total = DBusMessage.length(buffer[...]), buffer.count >= total {
                guard let message = DBusMessage.parse(buffer[..<total]) else { return .closed }
                buffer.removeFirst(total)
                return .message(message)
            }
            let left = deadline - Self.monotonic()
            guard left > 0 else { return .timeout }
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, Int32(min(left, 60) * 1000) + 1)
            if ready == 0 { return .timeout }
            if ready < 0 { if errno == EINTR { continue } else { return .closed } }
            var chunk = [UInt8](repeating: 0, count: 16 << 10)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return .closed }
            buffer += chunk[..<n]
        }
    }

    /// All of `bytes`; a bus that went away is a failed write (EPIPE), never a SIGPIPE that ends
    /// a command with no socket of SwiftNIO's to have had it ignored.
    private static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = Glibc.send(fd, buffer.baseAddress! + done, buffer.count - done, Int32(MSG_NOSIGNAL))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
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

    static func monotonic() -> Double { FileSystem.monotonic() }
}
