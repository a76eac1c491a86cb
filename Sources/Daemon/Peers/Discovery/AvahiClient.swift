/// The calls of org.freedesktop.Avahi (avahi-daemon's D-Bus API) that announcing and browsing
/// `_cenarius._tcp` take, over a DBusConnection, on the discovery's thread.
package struct AvahiClient {
    static let name = "org.freedesktop.Avahi"
    static let server = "org.freedesktop.Avahi.Server"
    static let entryGroup = "org.freedesktop.Avahi.EntryGroup"
    static let serviceBrowser = "org.freedesktop.Avahi.ServiceBrowser"
    /// AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, AVAHI_PROTO_INET.
    static let anyInterface: Int32 = -1, anyProtocol: Int32 = -1, inet: Int32 = 0
    /// AvahiLookupResultFlags: the record is one this host's avahi-daemon publishes.
    package static let ourOwn: UInt32 = 16
    /// AvahiEntryGroupState.
    static let collision: Int32 = 3, failure: Int32 = 4

    /// The signals the discovery follows; matched by interface, so that a browser's first
    /// ItemNew, sent before the call that made it has returned, is not missed.
    static let matches = [
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'",
        "type='signal',interface='\(serviceBrowser)'",
        "type='signal',interface='\(entryGroup)'",
    ]

    let bus: DBusConnection

    package enum Failure: Error {
        /// The bus answered with this error (`org.freedesktop.DBus.Error.ServiceUnknown`: no avahi-daemon).
        case error(String)
        case noAnswer
    }

    private func call(_ path: String, _ interface: String, _ member: String, _ body: DBusWriter = DBusWriter(),
                      timeout: Double = 5) throws(Failure) -> DBusMessage {
        guard let reply = bus.call(destination: Self.name, path: path, interface: interface, member: member, body: body, timeout: timeout) else {
            throw .noAnswer
        }
        guard reply.kind == .methodReturn else { throw .error(reply.errorName) }
        return reply
    }

    private func objectPath(_ reply: DBusMessage) throws(Failure) -> String {
        var values = reply.values
        guard reply.signature == "o", let path = values.string() else { throw .error("a reply without an object path") }
        return path
    }

    /// A new entry group's path.
    func entryGroupNew() throws(Failure) -> String {
        try objectPath(call("/", Self.server, "EntryGroupNew"))
    }

    /// Replaces what `group` publishes with the one service, and commits it.
    func publish(group: String, interface: Int32, name: String, port: UInt16, txt: [[UInt8]], reset: Bool) throws(Failure) {
        if reset { _ = try call(group, Self.entryGroup, "Reset") }
        var body = DBusWriter()
        body.int32(interface)
        body.int32(Self.anyProtocol)
        body.uint32(0)
        body.string(name)
        body.string(PeerAnnouncement.serviceType)
        body.string("")
        body.string("")
        body.uint16(port)
        body.byteArrays(txt)
        _ = try call(group, Self.entryGroup, "AddService", body)
        _ = try call(group, Self.entryGroup, "Commit")
    }

    /// A browser of `_cenarius._tcp` in the default domain, on every interface: its path.
    func browse() throws(Failure) -> String {
        var body = DBusWriter()
        body.int32(Self.anyInterface)
        body.int32(Self.anyProtocol)
        body.string(PeerAnnouncement.serviceType)
        body.string("")
        body.uint32(0)
        return try objectPath(call("/", Self.server, "ServiceBrowserNew", body))
    }

    /// A browser's ItemNew or ItemRemove: where, and which service.
    package struct Item: Sendable, Equatable {
        package var interface: Int32
        package var proto: Int32
        package var name: String
        package var type: String
        package var domain: String
        package var flags: UInt32
        /// One service on one interface and protocol: what ItemRemove names again.
        package var key: String { "\(interface)/\(proto)/\(name)" }

        package init?(_ message: DBusMessage) {
            var values = message.values
            guard message.signature == "iisssu", let interface = values.int32(), let proto = values.int32(), let name = values.string(),
                  let type = values.string(), let domain = values.string(), let flags = values.uint32() else { return nil }
            (self.interface, self.proto, self.name, self.type, self.domain, self.flags) = (interface, proto, name, type, domain, flags)
        }
    }

    package struct Resolved: Sendable, Equatable {
        package var address: String
        package var port: UInt16
        package var txt: [[UInt8]]
        package var flags: UInt32
    }

    /// The item's IPv4 address, port and TXT records (ResolveService; avahi-daemon gives up on
    /// a host that does not answer within a few seconds).
    func resolve(_ item: Item) throws(Failure) -> Resolved {
        var body = DBusWriter()
        body.int32(item.interface)
        body.int32(item.proto)
        body.string(item.name)
        body.string(item.type)
        body.string(item.domain)
        body.int32(Self.inet)
        body.uint32(0)
        return try Self.resolved(call("/", Self.server, "ResolveService", body, timeout: 10))
    }

    /// ResolveService's reply: `iissssisqaayu` (interface, protocol, name, type, domain, host,
    /// address protocol, address, port, TXT, flags).
    package static func resolved(_ reply: DBusMessage) throws(Failure) -> Resolved {
        var values = reply.values
        guard reply.signature == "iissssisqaayu", values.int32() != nil, values.int32() != nil, values.string() != nil,
              values.string() != nil, values.string() != nil, values.string() != nil, values.int32() != nil,
              let address = values.string(), let port = values.uint16(), let txt = values.byteArrays(), let flags = values.uint32() else {
            throw .error("a malformed ResolveService reply")
        }
        return Resolved(address: address, port: port, txt: txt, flags: flags)
    }
}
