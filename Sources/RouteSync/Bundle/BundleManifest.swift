/// `cenarius-bundle.json`, the first member of an offline bundle (docs/bundles.md): what it holds
/// and for whom, so that a technician (`tar -xOf B cenarius-bundle.json`) and `import` can say
/// "this stick is for channel beta, for devices on release r2" before anything is read. It is
/// signed by nothing and trusted for nothing: the head it names is verified as any head is, and
/// a device takes from the bundle only what that head names, each object checked by its hash.
///
///     {"format": "cenarius-bundle-1", "created": 1795652164,
///      "releases": [{"channel": "default", "head": "Routes.head", "version": 1795652164789,
///                    "release": "r3", "table": "<S>", "from": ["<S1>"], "firstInstall": false}],
///      "members": [{"name": "Routes.head", "size": 1432}, ...]}
package struct BundleManifest: Sendable, Equatable {
    package static let format = "cenarius-bundle-1"
    /// Its name in the bundle, and the member a reader meets first.
    package static let name = "cenarius-bundle.json"
    /// A manifest is small; one past this is not one.
    package static let maxBytes = 1 << 20

    /// One channel's release in the bundle.
    package struct Release: Sendable, Equatable {
        package var channel: String
        /// The head's name in the bundle (`Routes.head`, `Routes.beta.head`).
        package var head: String
        package var version: Int64
        /// The manifest's release name, if it has one.
        package var release: String?
        /// SHA-256 of the release's table.
        package var table: String
        /// The tables (SHA-256) of the releases a device may be on to take it from this bundle.
        package var from: [String]
        /// Whether a device with none of them (a first install) can take it too.
        package var firstInstall: Bool

        package init(channel: String, head: String, version: Int64, release: String?, table: String, from: [String], firstInstall: Bool) {
            (self.channel, self.head, self.version, self.release, self.table, self.from, self.firstInstall) =
                (channel, head, version, release, table, from, firstInstall)
        }

        /// Whether a device on the table `current` (SHA-256; nil: none) can take the release from the bundle.
        package func serves(_ current: String?) -> Bool {
            guard let current else { return firstInstall }
            return firstInstall || current == table || from.contains(current)
        }
    }

    package struct Member: Sendable, Equatable {
        package var name: String
        package var size: Int64
        package init(name: String, size: Int64) {
            self.name = name
            self.size = size
        }
    }

    package var created: Int64
    package var releases: [Release]
    /// Every other member, in the bundle's order.
    package var members: [Member]

    package init(created: Int64, releases: [Release], members: [Member]) {
        self.created = created
        self.releases = releases
        self.members = members
    }

    package func release(for channel: String) -> Release? { releases.first { $0.channel == channel } }

    /// One object, keys in a fixed order, a member per line.
    package func serialized() -> [UInt8] {
        let releases = releases.map { release in
            var parts = ["\"channel\": \(JSONText.quoted(release.channel))", "\"head\": \(JSONText.quoted(release.head))", "\"version\": \(release.version)"]
            if let name = release.release { parts.append("\"release\": \(JSONText.quoted(name))") }
            parts += ["\"table\": \"\(release.table)\"", "\"from\": [" + release.from.map { "\"\($0)\"" }.joined(separator: ", ") + "]",
                      "\"firstInstall\": \(release.firstInstall)"]
            return "{" + parts.joined(separator: ", ") + "}"
        }
        let members = members.map { "\n  {\"name\": \(JSONText.quoted($0.name)), \"size\": \($0.size)}" }
        return Array(("{\"format\": \"\(Self.format)\", \"created\": \(created),\n \"releases\": [" + releases.joined(separator: ", ") + "],\n \"members\": ["
            + members.joined(separator: ",") + "]}\n").utf8)
    }

    /// A manifest that does not parse, or whose known keys have the wrong type, is refused whole
    /// (exit 4): the bundle is damaged or not one. Unknown keys are ignored.
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> BundleManifest {
        func refuse(_ why: String) -> CenariusError { .integrity("\(source) is not a cenarius bundle's manifest: \(why)") }
        guard bytes.count <= maxBytes else { throw refuse("larger than \(maxBytes) bytes") }
        let json = try JSONValue.parse(bytes, source: source)
        guard json["format"]?.string == format else { throw refuse("format is not \(format)") }
        guard case .array(let list)? = json["releases"], case .array(let listed)? = json["members"] else { throw refuse("no releases or members") }
        var releases: [Release] = []
        for item in list {
            guard let channel = item["channel"]?.string, ReleaseHead.isChannel(channel), let head = item["head"]?.string, BundleLayout.isHead(head),
                  let version = item["version"]?.int64, let table = item["table"]?.string, ReleaseIndex.isTableDigest(table),
                  case .array(let from)? = item["from"] else { throw refuse("a release lacks channel, head, version, table or from") }
            let bases = from.compactMap(\.string).filter(ReleaseIndex.isTableDigest)
            guard bases.count == from.count else { throw refuse("from must list table digests") }
            releases.append(Release(channel: channel, head: head, version: version, release: item["release"]?.string, table: table,
                                    from: bases, firstInstall: item["firstInstall"] == .bool(true)))
        }
        var members: [Member] = []
        for item in listed {
            guard let name = item["name"]?.string, BundleLayout.isMember(name), let size = item["size"]?.int64, size >= 0 else {
                throw refuse("a member lacks a name of the bundle's layout or a size")
            }
            members.append(Member(name: name, size: size))
        }
        return BundleManifest(created: json["created"]?.int64 ?? 0, releases: releases, members: members)
    }
}

/// The names a bundle may hold: its manifest, heads beside it, and store objects under
/// `_cenarius/` in the store's own folders. Anything else (a path that climbs, a link, a device
/// file, a name of another layout) makes a bundle refused whole, never written anywhere.
package enum BundleLayout {
    /// The store's folders a bundle carries objects from.
    package static let storeFolders = ["t", "i", "z", "p", "f", "pack"]

    package static func isHead(_ name: String) -> Bool {
        name.hasSuffix(".head") && !name.hasPrefix(".") && name.utf8.count <= 255 && name.utf8.allSatisfy(isNameByte)
    }

    /// `_cenarius/<folder>/<name>`, a store object's name: hex digits, `-` and an extension.
    package static func isStoreObject(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Substring(ReleaseIndex.folder), storeFolders.contains(String(parts[1])) else { return false }
        let leaf = parts[2]
        return !leaf.isEmpty && !leaf.hasPrefix(".") && leaf.utf8.count <= 255 && leaf.utf8.allSatisfy(isNameByte)
    }

    package static func isMember(_ name: String) -> Bool { name == BundleManifest.name || isHead(name) || isStoreObject(name) }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
