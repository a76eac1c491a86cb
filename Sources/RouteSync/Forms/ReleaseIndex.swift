
/// What a remote publishes beside one table so that a device fetches less than whole files
/// (B8, docs/release-bytes.md). Everything is named from hashes the table already gives, so the
/// index stays a few hundred bytes plus one line per patch, whatever the size of the site:
///
/// - `_cenarius/z/<file hash>.zst`: the file compressed, for every file but those in `plain`;
/// - `_cenarius/p/<file hash>-<base hash>.zst`: a patch, for each pair in `patches`;
/// - `_cenarius/pack/<pack hash>.pack`: the compressed form of every file of the table, one zstd
///   frame after another, in the order of `RouteTable.packOrder`;
/// - `_cenarius/index/<SHA-256 of the table bytes>.json`: this index, so a device that has the
///   table knows its name, and a table without one costs a single 404.
///
/// - `_cenarius/<table name>.zst` when `tableForm` says so: the table compressed, which a device
///   that has seen it polls instead of the table (the one name here that changes with a release);
///
///     {"format": "cenarius-forms-1", "table": "<sha256>", "tableForm": true,
///      "plain": ["<hash>", ...] or "compressed": ["<hash>", ...] (PlainFiles), "patches": [["<hash>", "<base hash>"], ...],
///      "patchSizes": [<bytes>, ...], "formSizes": [<bytes>, ...] (hints: `formSizes`),
///      "pack": {"form": "<hash>", "size": <bytes>, "files": <count>},
///      "solidPack": {"form": "<hash>", "size": <bytes>, "files": <count>}}
///
/// - `_cenarius/pack/<hash>.pack` for `solidPack`: the same files as the pack, in the same order,
///   as one zstd frame of length-prefixed files (SolidPack): each compressed with the context of
///   those before it, what a first install fetches.
package struct ReleaseIndex: Sendable, Equatable {
    package static let format = "cenarius-forms-1"
    /// The folder of the remote that holds everything this index names.
    package static let folder = "_cenarius"

    package struct Patch: Sendable, Hashable {
        package var target: ContentHash
        package var base: ContentHash
        package init(target: ContentHash, base: ContentHash) {
            self.target = target
            self.base = base
        }
    }

    package struct Pack: Sendable, Equatable {
        /// The pack file's own hash (the table's algorithm): its name, and what its download is checked against.
        package var hash: ContentHash
        package var size: Int64
        /// How many frames it holds: the table's distinct hashes.
        package var files: Int
        package init(hash: ContentHash, size: Int64, files: Int) {
            self.hash = hash
            self.size = size
            self.files = files
        }
    }

    /// The frames a device holding an older release needs, in one file: for each distinct hash of
    /// this table that the older table lacks (in `RouteTable.packOrder`), a patch from `bases[i]`
    /// or, where that is empty, the compressed file.
    package struct DeltaPack: Sendable, Equatable {
        /// SHA-256 hex of the older table's bytes.
        package var from: String
        package var hash: ContentHash
        package var size: Int64
        package var bases: [ContentHash?]
        package init(from: String, hash: ContentHash, size: Int64, bases: [ContentHash?]) {
            self.from = from
            self.hash = hash
            self.size = size
            self.bases = bases
        }
    }

    /// An earlier table's solid pack, carried forward instead of a new one (`publish`): a first
    /// install fetches it, keeps the files this release has and the bases of the delta pack from
    /// that table (in `deltaPacks`), then that delta pack. `releases`: how many releases have
    /// carried it, this one included (`publish` repacks past a threshold).
    package struct CarriedPack: Sendable, Equatable {
        /// SHA-256 hex of the earlier table's bytes (`_cenarius/t/<from>.json`).
        package var from: String
        package var pack: Pack
        package var releases: Int
        package init(from: String, pack: Pack, releases: Int) {
            self.from = from
            self.pack = pack
            self.releases = releases
        }
    }

    /// SHA-256 hex of the table bytes this index belongs to.
    package var table: String
    /// Files with no compressed form (zstd could not make them smaller, or the solid pack alone holds them).
    package var plain: PlainFiles = []
    package var patches: [Patch] = []
    package var pack: Pack?
    /// The pack's files as one stream (SolidPack), when published.
    package var solidPack: Pack?
    /// The remote also publishes the table compressed (`tablePath`).
    package var tableForm = false
    /// The default channel's head is published beside the table (ReleaseHead): a device that
    /// sees it polls the head from then on.
    package var head = false
    /// The store holds the exact bytes of every `plain` file (`plainPath`): a device fetches them
    /// there, an immutable name, rather than at their uris.
    package var storedPlain = false
    package var deltaPacks: [DeltaPack] = []
    package var carriedPack: CarriedPack?
    /// Bytes of each file's compressed form (`z/`), in the table's `packOrder`, 0 where the
    /// publisher did not know it or the file has none; and of each patch, beside `patches`.
    /// Hints, not trusted: LAN peers share a release's fetching out by them (PeerShares), and
    /// every form is still checked by the file it decodes to. Older devices skip both members.
    package var formSizes: [Int64] = []
    package var patchSizes: [Int64] = []
    /// Forms below this are listed as 0 (weighed by their file's size, a few KiB either way): every
    /// release's index carries the list, and its digits are what it costs (a small site's delta bundle
    /// grew by a tenth with every form listed).
    package static let smallestListedForm: Int64 = 4096

    package init(table: String, plain: PlainFiles = [], patches: [Patch] = [], pack: Pack? = nil, tableForm: Bool = false) {
        self.table = table
        self.tableForm = tableForm
        self.plain = plain
        self.patches = patches
        self.pack = pack
    }

    package static func tableDigest(_ bytes: [UInt8]) -> String { StreamingHasher.sha256Hex(bytes) }

    /// Whether `text` is a digest as `tableDigest` writes it: 64 lower-case hex digits.
    package static func isTableDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Paths relative to the remote's base.
    package static func indexPath(table digest: String) -> String { "\(folder)/index/\(digest).json" }
    package static func formPath(_ hash: ContentHash) -> String { "\(folder)/z/\(hash.hex).zst" }
    package static func patchPath(_ patch: Patch) -> String { "\(folder)/p/\(patch.target.hex)-\(patch.base.hex).zst" }
    package static func packPath(_ hash: ContentHash) -> String { "\(folder)/pack/\(hash.hex).pack" }
    /// The exact bytes of a file zstd cannot shrink (`plain`), so that the store alone holds every
    /// release whole and devices fetch them at an immutable name (`routes --compress` writes them;
    /// `promote` and `rollback` rebuild a release from them).
    package static func plainPath(_ hash: ContentHash) -> String { "\(folder)/f/\(hash.hex)" }
    package static func tablePath(_ routesName: String) -> String { "\(folder)/\(routesName).zst" }

    /// Every store object this index names for `table`'s files: a form or the plain bytes of each
    /// file, the patches to them, the packs. What a published release needs beside its head.
    package func objects(for table: RouteTable) -> [String] {
        let hashes = Set(table.entries.map(\.hash))
        var keys = hashes.sorted { $0.hex < $1.hex }.map { plain.contains($0) ? Self.plainPath($0) : Self.formPath($0) }
        keys += patches.filter { hashes.contains($0.target) }.map(Self.patchPath)
        keys += ([pack, solidPack, carriedPack?.pack].compactMap { $0?.hash } + deltaPacks.map(\.hash)).map(Self.packPath)
        // A first install reads the carried pack's table too, which may be older than any release kept.
        if let carriedPack { keys.append("\(Self.folder)/t/\(carriedPack.from).json") }
        return keys
    }

    package func serialized() -> [UInt8] {
        var out = "{\"format\": \"\(Self.format)\", \"table\": \"\(table)\", \"tableForm\": \(tableForm),\n " + plain.member
        out += ",\n \"patches\": ["
        out += patches.map { "\n  [\"\($0.target.hex)\", \"\($0.base.hex)\"]" }.joined(separator: ",")
        out += "]"
        if patchSizes.count == patches.count, patchSizes.contains(where: { $0 > 0 }) { out += ",\n \"patchSizes\": " + Self.numbers(patchSizes) }
        if formSizes.contains(where: { $0 > 0 }) { out += ",\n \"formSizes\": " + Self.numbers(formSizes) }
        if head { out += ",\n \"head\": true" }
        if storedPlain { out += ",\n \"storedPlain\": true" }
        if let pack { out += ",\n \"pack\": {\"form\": \"\(pack.hash.hex)\", \"size\": \(pack.size), \"files\": \(pack.files)}" }
        if let solidPack { out += ",\n \"solidPack\": {\"form\": \"\(solidPack.hash.hex)\", \"size\": \(solidPack.size), \"files\": \(solidPack.files)}" }
        if let carriedPack {
            let pack = carriedPack.pack
            out += ",\n \"carriedPack\": {\"from\": \"\(carriedPack.from)\", \"form\": \"\(pack.hash.hex)\", \"size\": \(pack.size), \"files\": \(pack.files), "
                + "\"releases\": \(carriedPack.releases)}"
        }
        if !deltaPacks.isEmpty {
            out += ",\n \"deltaPacks\": [" + deltaPacks.map { delta in
                "\n  {\"from\": \"\(delta.from)\", \"form\": \"\(delta.hash.hex)\", \"size\": \(delta.size), \"bases\": ["
                    + delta.bases.map { "\"\($0?.hex ?? "")\"" }.joined(separator: ", ") + "]}"
            }.joined(separator: ",") + "]"
        }
        out += "}\n"
        return Array(out.utf8)
    }
}

extension ReleaseIndex {
    /// `[1, 2, 3]`, twenty to a line.
    static func numbers(_ values: [Int64]) -> String {
        "[" + stride(from: 0, to: values.count, by: 20).map { start in
            values[start..<min(values.count, start + 20)].map(String.init).joined(separator: ",")
        }.joined(separator: ",\n  ") + "]"
    }

    /// The bytes a device fetches for each file of `table` this index gives a size for: its
    /// smallest patch's, else its compressed form's (what every device on a release the patches
    /// start from fetches, and the same on every device, whatever it holds).
    package func formBytes(for table: RouteTable) -> [ContentHash: Int64] {
        var bytes: [ContentHash: Int64] = [:]
        if formSizes.count == table.packOrder.count {
            for (entry, size) in zip(table.packOrder, formSizes) where size > 0 { bytes[entry.hash] = size }
        }
        if patchSizes.count == patches.count {
            for (patch, size) in zip(patches, patchSizes) where size > 0 && size < bytes[patch.target] ?? .max { bytes[patch.target] = size }
        }
        return bytes
    }

    /// Adds a patch with its size (0: not known), keeping `patchSizes` beside `patches`.
    package mutating func addPatch(_ patch: Patch, size: Int64) {
        if patchSizes.count < patches.count { patchSizes += Array(repeating: 0, count: patches.count - patchSizes.count) }
        patches.append(patch)
        patchSizes.append(size)
    }

    /// The size an earlier index gave `patch`, 0 when none.
    package func patchSize(_ patch: Patch) -> Int64 {
        guard patchSizes.count == patches.count, let i = patches.firstIndex(of: patch) else { return 0 }
        return patchSizes[i]
    }
}

extension RouteTable {
    /// The distinct hashes of the table in the order of their first uri: the order of a pack's frames.
    package var packOrder: [RouteEntry] {
        var seen = Set<ContentHash>()
        return entries.sorted { $0.uri < $1.uri }.filter { seen.insert($0.hash).inserted }
    }
}

extension Remote {
    /// The table's compressed form on this remote (B8): polled instead of the table once seen.
    package var tableFormURL: String { objectURL(ReleaseIndex.tablePath(routesName)) }
}
