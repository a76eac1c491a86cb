/// A remote folder on a static HTTP(S) server (or `file://`), holding the route table and its files.
package struct Remote: Sendable, Equatable, CustomStringConvertible {
    /// Without a trailing slash.
    package let base: String
    package let routesName: String
    /// The channel this device follows (`--channel`): another than the default is had from its head alone.
    package let channel: String

    package init(_ url: String, routesName: String = "Routes.json", channel: String = ReleaseHead.defaultChannel) throws(CenariusError) {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("file://") else {
            throw .usage("remote \(JSONText.quoted(url)) must be an http://, https:// or file:// URL")
        }
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .usage("remote \(JSONText.quoted(url)) contains spaces or control characters")
        }
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.routesName = routesName
        self.channel = channel
    }

    /// An offline bundle (docs/bundles.md): a remote that holds a head and the store objects it
    /// names, and no Cenarius layout to fall back to.
    package var isBundle = false

    /// A bundle file read in place: its members are had from their byte ranges in the tar, and
    /// nothing else is there (`base` is the tar's URL).
    package var members: TarMembers?

    /// The URL of `relative` under the remote: in a tar read in place, its member's byte range.
    private func located(_ relative: String) -> String {
        guard let members else { return base + "/" + relative }
        // What the tar does not hold is asked of a path under it, which no file system has: a 404.
        return members.url(relative) ?? base + "/" + relative
    }

    /// A channel other than the default: its table, manifest and signature come from its head,
    /// never from the Cenarius layout (which is the default channel's).
    package var followsChannel: Bool { channel != ReleaseHead.defaultChannel }

    /// The head is this remote's only word: a channel's (the layout is the default channel's) or
    /// a bundle's (it has no layout). Whatever fails with the head fails the sync.
    package var headOnly: Bool { followsChannel || isBundle }

    /// What the cache records a release as coming from: the table, or a channel's head.
    package var releaseSource: String { followsChannel ? headURL : tableURL }

    package var description: String { base }
    package var tableURL: String { located(Remote.escape(routesName)) }
    package var signatureURL: String { located(Remote.escape(routesName) + ".sig") }
    /// The release manifest beside the table (G10).
    package var manifestURL: String { located(Remote.escape(routesName) + ".release") }
    /// The channel's head beside the table (ReleaseHead).
    package var headURL: String { located(Remote.escape(ReleaseHead.name(routesName: routesName, channel: channel))) }
    /// An object of the store (`_cenarius/...`), by its path under the remote.
    package func objectURL(_ relative: String) -> String { located(relative) }

    /// `host[:port]` of an http(s) URL, lowercased, without user information; nil for other URLs.
    package static func authority(of url: String) -> String? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        var authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return authority.isEmpty ? nil : authority.lowercased()
    }

    package func fileURL(_ uri: URIPath) -> String { located(Remote.escape(uri.value)) }

    /// Percent-encodes everything but unreserved characters and `/`.
    package static func escape(_ path: String) -> String {
        // Nearly every uri needs no escaping: then it is its own encoding, no copy (a seed asks for thousands).
        let plain = path.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isUnreserved) } ?? path.utf8.allSatisfy(isUnreserved)
        guard !plain else { return path }
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count * 3)
        for byte in path.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
