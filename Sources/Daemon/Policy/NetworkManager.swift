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

    static func property(_ name: String) -> UInt32? {
        guard let bus = DBusConnection(timeout: 1) else { return nil }
        var body = DBusWriter()
        body.string("org.freedesktop.NetworkManager")
        body.string(name)
        guard let reply = bus.call(destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
                                   interface: "org.freedesktop.DBus.Properties", member: "Get", body: body, timeout: 1),
              reply.kind == .methodReturn else { return nil }
        return reply.variantUInt32
    }
}
