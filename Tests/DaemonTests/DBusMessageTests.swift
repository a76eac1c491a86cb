import Daemon
import Foundation
import Testing
import TestOrigin

/// The D-Bus messages NetworkManager's `Metered` is read with: the call as the bus expects it,
/// and replies as the bus sends them (bytes from `dbus-monitor --binary` of a real exchange's shape).
@Suite struct DBusMessageTests {
    @Test func aPropertyGetIsMarshalledAsTheBusReadsIt() throws {
        let call = DBusMessage.call(serial: 2, destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
                                    interface: "org.freedesktop.DBus.Properties", member: "Get", strings: ["org.freedesktop.NetworkManager", "Metered"])
        #expect(Array(call.prefix(4)) == [UInt8(ascii: "l"), 1, 0, 1])
        #expect(DBusMessage.length(call[...]) == call.count)
        let parsed = try #require(DBusMessage.parse(call[...]))
        #expect(parsed.kind == .methodCall && parsed.serial == 2 && parsed.signature == "ss")
        // The body: two strings, each length-prefixed, NUL-terminated, 4-aligned.
        #expect(parsed.body.count == 4 + 30 + 1 + 1 + 4 + 7 + 1)
    }

    @Test func aReplyWithAVariantUInt32IsRead() throws {
        // METHOD_RETURN, serial 7, REPLY_SERIAL 2, SIGNATURE "v", body: variant "u" 4 (NM_METERED_GUESS_NO).
        // The fields array's length leaves out the padding that ends the header.
        let fields: [UInt8] = [5, 1, 0x75, 0, 2, 0, 0, 0,  8, 1, 0x67, 0, 1, 0x76, 0]
        let body: [UInt8] = [1, 0x75, 0, 0, 4, 0, 0, 0]
        let reply: [UInt8] = [UInt8(ascii: "l"), 2, 1, 1] + le(UInt32(body.count)) + le(7) + le(UInt32(fields.count)) + fields + [0] + body
        let message = try #require(DBusMessage.parse(reply[...]))
        #expect(message.kind == .methodReturn && message.replySerial == 2 && message.signature == "v")
        #expect(message.variantUInt32 == 4)
        #expect(NetworkManager.meaning(4) == false && NetworkManager.meaning(1) == true && NetworkManager.meaning(3) == true && NetworkManager.meaning(0) == nil)
        // Cut short, or claiming more than it holds: not a message.
        #expect(DBusMessage.parse(reply.dropLast()[...]) == nil)
        var lying = reply
        lying[4] = 0xFF
        #expect(DBusMessage.parse(lying[...]) == nil)
        #expect(DBusMessage.parse(Array("BEGIN\r\n".utf8)[...]) == nil)
    }

    @Test func anErrorReplyHasNoValue() throws {
        let fields: [UInt8] = [5, 1, 0x75, 0, 2, 0, 0, 0]
        let reply: [UInt8] = [UInt8(ascii: "l"), 3, 1, 1] + le(0) + le(9) + le(UInt32(fields.count)) + fields
        let message = try #require(DBusMessage.parse(reply[...]))
        #expect(message.kind == .error && message.variantUInt32 == nil)
    }

    private func le(_ value: UInt32) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)] }
}

/// The probe's whole exchange against a bus on a socket of the test's own: the SASL handshake,
/// Hello, then Get, answered as the system bus and NetworkManager answer (a signal in between).
@Suite(.serialized) struct NetworkManagerProbeTests {
    @Test func theProbeReadsMeteredFromTheBus() throws {
        let path = "/tmp/cenarius-dbus-\(getpid())"
        unlink(path)
        let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0 && listen(server, 1) == 0)
        defer { close(server); unlink(path) }
        let answered = Thread { Self.serve(server, metered: 3) }
        answered.start()
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(path)", 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        #expect(NetworkManager.metered() == true, "NM_METERED_GUESS_YES")
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus", 1)
        #expect(NetworkManager.metered() == nil, "no bus: no answer, and no wait")
    }

    /// One client: OK to its AUTH, then replies to serial 1 (Hello) and, after a signal, serial 2.
    static func serve(_ server: Int32, metered: UInt32) {
        let client = accept(server, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var received: [UInt8] = []
        func readMore() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            received += chunk[..<n]
            return true
        }
        while !String(decoding: received, as: UTF8.self).contains("BEGIN\r\n") {
            if String(decoding: received, as: UTF8.self).contains("AUTH EXTERNAL"), !received.contains(UInt8(ascii: "K")) {
                _ = send(client, "OK 1234deadbeef\r\n", 17, Int32(MSG_NOSIGNAL))
                received.append(UInt8(ascii: "K"))
            }
            guard readMore() else { return }
        }
        let begin = Array("BEGIN\r\n".utf8)
        guard let at = (0...(received.count - begin.count)).first(where: { Array(received[$0..<($0 + begin.count)]) == begin }) else { return }
        var messages = Array(received[(at + begin.count)...])
        var serials: [UInt32] = []
        while serials.count < 2 {
            while DBusMessage.length(messages[...]).map({ messages.count < $0 }) ?? true {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return }
                messages += chunk[..<n]
            }
            let total = DBusMessage.length(messages[...])!
            guard let message = DBusMessage.parse(messages[..<total]) else { return }
            messages.removeFirst(total)
            serials.append(message.serial)
        }
        func le(_ value: UInt32) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)] }
        func reply(_ serial: UInt32, to: UInt32, signature: UInt8, body: [UInt8], kind: UInt8 = 2) -> [UInt8] {
            let fields: [UInt8] = [5, 1, 0x75, 0] + le(to) + [8, 1, 0x67, 0, 1, signature, 0]
            return [UInt8(ascii: "l"), kind, 1, 1] + le(UInt32(body.count)) + le(serial) + le(UInt32(fields.count)) + fields + [0] + body
        }
        let hello = reply(1, to: serials[0], signature: 0x73, body: le(4) + Array(":1.9".utf8) + [0, 0, 0, 0])
        let signal = reply(2, to: 0, signature: 0x73, body: le(4) + Array(":1.9".utf8) + [0, 0, 0, 0], kind: 4)
        let get = reply(3, to: serials[1], signature: 0x76, body: [1, 0x75, 0, 0] + le(metered))
        let all = hello + signal + get
        _ = all.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var rest = [UInt8](repeating: 0, count: 64)
        _ = recv(client, &rest, 64, 0)
    }
}

/// The marshalling against a real dbus-daemon (which checks every message's body against its
/// signature, and drops a connection that sends one that does not match) and against busctl's
/// (sd-bus's) marshalling: AddService's arguments as the discovery sends them to avahi-daemon
/// reach another connection whole, and what busctl sends for `aayq` reads back.
@Suite(.serialized) struct DBusBusTests {
    static let daemon = "/usr/bin/dbus-daemon"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: daemon), "needs dbus-daemon (Debian's dbus-daemon)"))
    func theBusTakesOurAAYAndWeReadBusctls() throws {
        let dir = NSTemporaryDirectory() + "cenarius-bus-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/bus"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(socket)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy></busconfig>
            """.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        let bus = Process()
        bus.executableURL = URL(fileURLWithPath: Self.daemon)
        bus.arguments = ["--config-file=" + dir + "/bus.conf", "--nofork", "--nopidfile"]
        try bus.run()
        defer { bus.signal(SIGKILL); bus.waitUntilExit() }
        var receiver: DBusConnection?
        for _ in 0..<100 where receiver == nil {
            receiver = DBusConnection(path: socket, timeout: 2)
            if receiver == nil { usleep(50_000) }
        }
        let listening = try #require(receiver)
        var name = DBusWriter()
        name.string("org.example.Cenarius")
        name.uint32(0)
        let owned = try #require(listening.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                                member: "RequestName", body: name, timeout: 5))
        #expect(owned.kind == .methodReturn)
        func nextCall(_ member: String) -> DBusMessage? {
            for _ in 0..<8 {
                guard case .message(let message) = listening.next(timeout: 5) else { return nil }
                if message.kind == .methodCall && message.member == member { return message }
            }
            return nil
        }

        // Ours, to the bus: AddService's arguments, with TXT records of 0, 1 and 9 bytes.
        let sender = try #require(DBusConnection(path: socket, timeout: 2))
        let txt = [Array("txtvers=1".utf8), [], Array("c".utf8)]
        var body = DBusWriter()
        body.int32(-1)
        body.int32(-1)
        body.uint32(0)
        body.string("cenarius-5eed")
        body.string("_cenarius._tcp")
        body.string("")
        body.string("")
        body.uint16(8701)
        body.byteArrays(txt)
        #expect(body.signature == "iiussssqaay")
        #expect(sender.send(destination: "org.example.Cenarius", path: "/x", interface: "org.example.Test", member: "AddService", body: body) != nil)
        let call = try #require(nextCall("AddService"), "the bus passed it on (a malformed body would have cost the sender its connection)")
        #expect(call.signature == "iiussssqaay")
        var values = call.values
        #expect(values.int32() == -1 && values.int32() == -1 && values.uint32() == 0 && values.string() == "cenarius-5eed")
        #expect(values.string() == "_cenarius._tcp" && values.string() == "" && values.string() == "" && values.uint16() == 8701)
        #expect(values.byteArrays() == txt && values.atEnd)
        // An empty `aay`.
        var none = DBusWriter()
        none.byteArrays([])
        none.uint16(7)
        #expect(sender.send(destination: "org.example.Cenarius", path: "/x", interface: "org.example.Test", member: "Empty", body: none) != nil)
        var empty = try #require(nextCall("Empty")).values
        #expect(empty.byteArrays() == [] && empty.uint16() == 7)

        // busctl's, read by us.
        let busctl = Process()
        busctl.executableURL = URL(fileURLWithPath: "/usr/bin/busctl")
        busctl.arguments = ["--address=unix:path=" + socket, "call", "--expect-reply=no", "org.example.Cenarius", "/x", "org.example.Test",
                            "Txt", "aayq", "2", "3", "97", "98", "99", "0", "8701"]
        try busctl.run()
        busctl.waitUntilExit()
        #expect(busctl.terminationStatus == 0)
        let theirs = try #require(nextCall("Txt"))
        var read = theirs.values
        #expect(theirs.signature == "aayq" && read.byteArrays() == [Array("abc".utf8), []] && read.uint16() == 8701)
    }
}
