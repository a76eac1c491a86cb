/// The head of a channel (docs/remote-layout.md): the one small document a device polls, beside
/// the table, naming everything else by content hash so that every other name of the remote is
/// immutable and a CDN may cache it forever (TUF's consistent snapshots):
///
///     {"format": "cenarius-head-1", "channel": "default", "version": 1795400000123,
///      "table": {"sha256": "<S>", "size": 4113, "zst": "<O>", "zstSize": 1012,
///                "patches": [{"from": "<S0>", "sha256": "<P>", "size": 333}]},
///      "index": "<X>", "release": "<the release manifest's exact text>",
///      "signature": "<a Routes.json.sig-style sidecar's exact text>"}
///
/// - `_cenarius/t/<S>.json` holds the table's exact bytes, `_cenarius/t/<O>.zst` (when `zst` is
///   given) the table compressed with the release index as a second frame, `_cenarius/i/<X>.json`
///   the release index, `_cenarius/t/<P>.patch` the table then the index as one zstd frame made
///   `--patch-from` an earlier table `<S0>` (a device on `<S0>` fetches that, a few hundred bytes,
///   where the compressed table is tens of kilobytes); each is checked against the hash that names it.
/// - The signature is a sidecar of the second format over the table, the release manifest, the
///   index and the channel (role `channel`: the bytes `cenarius-channel:<name>`), with the
///   version, expiry and key rotations of any sidecar: a head served at another channel's name,
///   or naming other bytes, is refused like a table whose signature does not match.
package struct ReleaseHead: Sendable, Equatable {
    package static let format = "cenarius-head-1"
    package static let defaultChannel = "default"
    package static let channelRole = "channel"
    package static let indexRole = "index"
    /// Heads are small; one past this is not one.
    package static let maxBytes = 256 << 10

    package var channel: String
    package var version: Int64
    /// SHA-256 hex and size of the table's exact bytes.
    package var table: String
    package var tableSize: Int64
    /// SHA-256 hex and size of the compressed table object (table, then index), if published.
    package var tableForm: String?
    package var tableFormSize: Int64?
    /// Patches to the table (then the index) from earlier tables, newest base first.
    package var tablePatches: [TablePatch] = []
    /// SHA-256 hex of the release index, if published.
    package var index: String?
    /// The release manifest's exact bytes, if the release has one.
    package var release: [UInt8]?
    /// The signature sidecar's exact bytes, if signed.
    package var signature: [UInt8]?
    /// The index's solid pack: what a first install fetches, named here so that it is on its way
    /// while the table takes its round trip. A hint: a device takes a pack only as the index names it.
    package var solidPack: PackHint?
    /// The earlier solid pack the index carries instead (ReleaseIndex.CarriedPack): the same hint
    /// for a first install, under a key devices that would take it for a solid pack ignore.
    package var carriedPack: PackHint?

    /// A pack the index names (`_cenarius/pack/<hash>.pack`), by its hash and size.
    package struct PackHint: Sendable, Equatable {
        package var hash: ContentHash
        package var size: Int64
        package init(hash: ContentHash, size: Int64) {
            self.hash = hash
            self.size = size
        }
    }

    /// `_cenarius/t/<sha256>.patch`: the new table and index, one zstd frame whose prefix is the
    /// exact bytes of the table named `from`.
    package struct TablePatch: Sendable, Equatable {
        package var from: String
        package var digest: String
        package var size: Int64
        /// The patch itself, in the head (`"bytes"`, base64): the newest base's, when small, so that
        /// a device on the previous release has the new table with the head, one round trip fewer.
        package var inline: [UInt8]?
        /// The index's delta pack from the same table: fetched beside the patch.
        package var pack: PackHint?

        package init(from: String, digest: String, size: Int64, inline: [UInt8]? = nil) {
            self.from = from
            self.digest = digest
            self.size = size
            self.inline = inline
        }
    }

    /// The largest patch carried in the head itself.
    package static let maxInlinePatch = 16 << 10
    /// The most a head with a patch inside may weigh: what a new TCP connection's first window
    /// (ten segments, about 14 KB) carries with the response's headers. A heavier head takes one
    /// more round trip than the patch it carries would have.
    package static let firstWindow = 12 << 10

    /// The packs the index names, as hints beside the table (`solidPack`, a patch's `pack`).
    package mutating func hintPacks(from index: ReleaseIndex) {
        solidPack = index.solidPack.map { PackHint(hash: $0.hash, size: $0.size) }
        carriedPack = index.carriedPack.map { PackHint(hash: $0.pack.hash, size: $0.pack.size) }
        for i in tablePatches.indices {
            tablePatches[i].pack = index.deltaPacks.first { $0.from == tablePatches[i].from }.map { PackHint(hash: $0.hash, size: $0.size) }
        }
    }

    /// Leaves the inline patch out when the head would not fit in a connection's first window.
    package mutating func fitFirstWindow() {
        guard serialized().count > Self.firstWindow else { return }
        for i in tablePatches.indices { tablePatches[i].inline = nil }
    }

    /// Table patches a head names at most (from the last few releases; older devices take the compressed table).
    package static let maxTablePatches = 4

    package init(channel: String = ReleaseHead.defaultChannel, version: Int64, table: String, tableSize: Int64) {
        self.channel = channel
        self.version = version
        self.table = table
        self.tableSize = tableSize
    }

    /// The head's name beside the table: `Routes.head` for the default channel, `Routes.beta.head`
    /// for `beta` (from `--routes-name`, less its `.json`).
    package static func name(routesName: String, channel: String = defaultChannel) -> String {
        let stem = routesName.hasSuffix(".json") ? String(routesName.dropLast(5)) : routesName
        return channel == defaultChannel ? stem + ".head" : stem + "." + channel + ".head"
    }

    package static func tablePath(_ digest: String) -> String { "\(ReleaseIndex.folder)/t/\(digest).json" }
    package static func tableFormPath(_ digest: String) -> String { "\(ReleaseIndex.folder)/t/\(digest).zst" }
    package static func indexPath(_ digest: String) -> String { "\(ReleaseIndex.folder)/i/\(digest).json" }
    package static func tablePatchPath(_ digest: String) -> String { "\(ReleaseIndex.folder)/t/\(digest).patch" }

    /// Every store object the head names, with the SHA-256 that names it: what a publisher checks,
    /// uploads first and never prunes while the head is kept.
    package var objects: [(path: String, digest: String)] {
        var objects = [(Self.tablePath(table), table)]
        if let tableForm { objects.append((Self.tableFormPath(tableForm), tableForm)) }
        if let index { objects.append((Self.indexPath(index), index)) }
        for patch in tablePatches { objects.append((Self.tablePatchPath(patch.digest), patch.digest)) }
        return objects
    }

    /// What the signature covers for the channel: its name, under a prefix no file begins with.
    package static func channelBytes(_ channel: String) -> [UInt8] { Array(("cenarius-channel:" + channel).utf8) }

    /// A channel name: what a role or a file name may hold (lower-case letters, digits, `-`), so
    /// that it is safe in a URL and in the head's name.
    package static func isChannel(_ name: String) -> Bool { TableSignature.isRole(name) && name.utf8.count <= 32 }

    /// A channel given on the command line, or a usage error (exit 64) that says what one is.
    package static func checkChannel(_ name: String, option: String = "--channel") throws(CenariusError) {
        guard isChannel(name) else { throw .usage("\(option) must be lower-case letters, digits and -, at most 32 bytes (\"\(name)\" is not)") }
    }

    /// The files a signed head covers, by role, given the bytes they name.
    package func signedFiles(table: [UInt8], index: [UInt8]?) -> [String: [UInt8]] {
        var files = [TableSignature.tableRole: table, Self.channelRole: Self.channelBytes(channel)]
        files[TableSignature.releaseRole] = release
        files[Self.indexRole] = index
        return files
    }

    /// One line, keys in a fixed order.
    package func serialized() -> [UInt8] {
        var tableParts = ["\"sha256\": \"\(table)\"", "\"size\": \(tableSize)"]
        if let tableForm, let tableFormSize { tableParts += ["\"zst\": \"\(tableForm)\"", "\"zstSize\": \(tableFormSize)"] }
        if !tablePatches.isEmpty {
            let patches = tablePatches.map { patch in
                "{\"from\": \"\(patch.from)\", \"sha256\": \"\(patch.digest)\", \"size\": \(patch.size)"
                    + (patch.pack.map { ", \"pack\": \"\($0.hash.hex)\", \"packSize\": \($0.size)" } ?? "")
                    + (patch.inline.map { ", \"bytes\": \"\(Base64.encode($0))\"" } ?? "") + "}"
            }
            tableParts.append("\"patches\": [" + patches.joined(separator: ", ") + "]")
        }
        var parts = ["\"format\": \"\(Self.format)\"", "\"channel\": \(JSONText.quoted(channel))", "\"version\": \(version)",
                     "\"table\": {" + tableParts.joined(separator: ", ") + "}"]
        if let index { parts.append("\"index\": \"\(index)\"") }
        if let solidPack { parts.append("\"solidPack\": {\"form\": \"\(solidPack.hash.hex)\", \"size\": \(solidPack.size)}") }
        if let carriedPack { parts.append("\"carriedPack\": {\"form\": \"\(carriedPack.hash.hex)\", \"size\": \(carriedPack.size)}") }
        if let release { parts.append("\"release\": " + JSONText.quoted(String(decoding: release, as: UTF8.self))) }
        if let signature { parts.append("\"signature\": " + JSONText.quoted(String(decoding: signature, as: UTF8.self))) }
        return Array(("{" + parts.joined(separator: ", ") + "}\n").utf8)
    }
}
