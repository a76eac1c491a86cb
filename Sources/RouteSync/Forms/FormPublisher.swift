/// `routes NEW --compress [--delta-from OLD]...`: writes under `NEW/_cenarius/` a zstd form of
/// every file, patches from the files of older releases for every file they lack, one pack of
/// the zstd forms for a first install, and the index (ReleaseIndex). A form is kept only when it
/// is smaller than what it replaces. Every name comes from content hashes, so forms shared with
/// earlier releases are written once and a CDN may cache them forever.
package struct FormPublisher {
    package struct Release {
        package var root: String
        package var table: RouteTable
        /// The exact bytes of its table, as devices hold them (a delta pack is named for their digest).
        package var tableBytes: [UInt8]
        package init(root: String, table: RouteTable, tableBytes: [UInt8]? = nil) {
            self.root = root
            self.table = table
            self.tableBytes = tableBytes ?? table.serialized()
        }
    }

    /// A patch's base and file together stay within this, so a device decodes any patch in a
    /// bounded window (FormDecoding.windowLogMax): larger files get a compressed form only.
    package static let patchWindowBudget: Int64 = 32 << 20

    package let release: Release
    package let tableBytes: [UInt8]
    package let olds: [Release]

    package struct Summary: Sendable, Encodable {
        package var index = ""
        package var files = 0
        package var plainBytes: Int64 = 0
        package var compressedForms = 0
        package var compressedBytes: Int64 = 0
        package var patches = 0
        package var patchBytes: Int64 = 0
        package var packBytes: Int64 = 0
        package var solidPackBytes: Int64 = 0
        /// Forms read as an earlier run wrote them, not compressed again; and whether the packs were
        /// taken from the store as they are.
        package var reusedForms = 0
        package var reusedPacks = false
        /// No new solid pack: the earlier one was carried forward (Carry).
        package var carriedPack = false
        /// Files given no object of their own in the store (`formsAtURI`): a pack holds them.
        package var filesAtURI = 0
    }

    /// An earlier table's solid pack to carry forward instead of making a new one (`publish`):
    /// the previous release's own, or the one it carried. A one-file release then costs its delta
    /// packs and forms, not a compression and an upload of the whole site; a first install
    /// fetches that pack and the delta pack from its table (ReleaseIndex.CarriedPack).
    package struct Carry: Sendable {
        package var from: String
        package var pack: ReleaseIndex.Pack
        /// Releases that carried it before this one.
        package var releases: Int
        package init(from: String, pack: ReleaseIndex.Pack, releases: Int) {
            self.from = from
            self.pack = pack
            self.releases = releases
        }

        /// A new solid pack is made once the delta pack from the carried table outgrows this share
        /// of the pack (a first install then costs at most about 1.04× a new pack, less what the
        /// old pack holds that the site no longer has), or once this many releases carried it.
        package static let maxShare = 0.04
        package static let maxReleases = 16
    }

    /// The table's file name (`--routes-name`).
    package var routesName = "Routes.json"
    /// Also writes the compressed table at the one mutable name `routes` wrote before heads,
    /// `_cenarius/<name>.zst`, and says so in the index: the layout of remotes published by
    /// earlier versions, which devices still meet. `routes` no longer writes it (every name under
    /// `_cenarius/` is immutable); tests of devices on such remotes do.
    package var tableFormBeside = false
    /// The caller writes the default channel's head beside the table (`routes` does, after the forms).
    package var head = false
    /// Where `_cenarius/` is written: the release's own folder unless `routes --out-dir` (and
    /// `publish`, which stages a release apart from its build folder) names another.
    package var outputRoot: String?

    /// An earlier index over this same table (default: the one under the table's hash in the
    /// output root, from an earlier run), whose packs and patches the store still holds are taken
    /// as they are; a form already under `_cenarius/z/` that decodes to its file is read rather than
    /// compressed again. Only what differs — patches and delta packs from `olds` — is made anew: a
    /// rollback, or a run again over the same folder, costs seconds, not a compression of the site.
    package var reusing: ReleaseIndex?
    /// Whether the store holds an object (a relative key) besides the files under the output root:
    /// a republish says what the remote holds.
    package var storeHolds: ((String) -> Bool)?
    /// The size the store lists an object at (`publish`): a form it holds, which no pack of this
    /// release needs whole, is named without being read (`listedForm`).
    package var storeSize: ((String) -> Int64?)?
    /// The solid pack to carry forward when the delta pack from its table stays small; nil: a
    /// new one (as `routes` always makes). Its table must be one of `olds`.
    package var carry: Carry?
    /// The default channel's Cenarius layout holds every file of the release at its uri, which the
    /// head is written after (`publish`): a file that a pack of this release holds (made, reused or
    /// carried) gets no form or plain copy of its own in the store, and the index lists it `plain`
    /// with `storedPlain` false, so a device that does not take the pack fetches it at its uri — as
    /// devices of every version do for such an index. A first publish then uploads each file once,
    /// at its uri, besides the packs; `StoredRelease` rebuilds such files from the pack.
    package var formsAtURI = false
    /// Objects' bytes from the store, by key (`publish`): a form or patch it holds is read and checked
    /// to decode to its file rather than made again, which for a large file costs seconds (a listed
    /// form only when it is a delta frame: `listedForm`). Those the files will ask for are read in one
    /// call before the first (`prefetch`), concurrently; `publish` cuts patches from the head's delta
    /// packs where it can (DeltaFrames).
    package var storeRead: (([String]) -> [String: [UInt8]])?
    /// Patches the store holds from bases it holds too, taken by their names without their bases
    /// (`publish`, which then reads no base for them): a name is its content's (`<target>-<base>`), as
    /// the upload plan takes every store object, and a device checks what a patch decodes to against
    /// the signed table and falls back to the file (docs/decisions.md).
    package var patchesByName: Set<ReleaseIndex.Patch> = []
    /// What `prefetch` read.
    var fetched: [String: [UInt8]] = [:]
    /// Forms already read from the store, by key (a republish's, as `StoredRelease.materialize`
    /// rebuilt the files from them): held by the store, and taken as they are when they decode to
    /// their file, as a form an earlier run left in the output root is.
    package var heldForms: [String: [UInt8]] = [:]

    package init(release: Release, tableBytes: [UInt8], olds: [Release]) {
        self.release = release
        self.tableBytes = tableBytes
        self.olds = olds
    }

    /// What a run wrote: the summary, the index's exact bytes, and the table compressed with the
    /// index as its second frame (nil when compressing does not shrink the table).
    package struct Published: Sendable {
        package var summary: Summary
        package var index: [UInt8]
        package var tableForm: [UInt8]?
        /// The index under the table's hash, which devices that predate heads read: this run's, or
        /// the one an earlier run wrote there.
        package var legacyIndex: [UInt8]
    }

    /// Writes `index` under the table's hash unless an index is there already (every name under
    /// `_cenarius/` is written once); returns the one there.
    package static func writeLegacyIndex(_ index: [UInt8], table digest: String, root: String) throws(CenariusError) -> [UInt8] {
        let path = FileSystem.join(root, ReleaseIndex.indexPath(table: digest))
        if let existing = try? FileSystem.readFile(path, limit: 32 << 20) { return existing }
        try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
        try FileSystem.writeAtomically(index, to: path)
        return index
    }

    /// Writes the release's forms, packs and index under the output root: what can be taken as
    /// it is first (Run), then each file in pack order, then the packs, then the index.
    package func publish() throws(CenariusError) -> Published {
        var publisher = self
        var run = try Run(self)
        publisher.fetched = prefetch(run)
        try publisher.startSolidPack(&run)
        for (ordinal, entry) in run.files.enumerated() { try publisher.add(entry, ordinal: ordinal, to: &run) }
        try publisher.finishPacks(&run)
        return try publisher.finishIndex(run)
    }

    /// A file of the build as the table names it: one that changed since `routes` hashed it is refused.
    func verifiedBytes(_ entry: RouteEntry) throws(CenariusError) -> [UInt8] {
        let bytes = try FileSystem.readFile(FileSystem.join(release.root, entry.uri.value))
        guard StreamingHasher.hash(bytes, entry.hash.algorithm) == entry.hash else {
            throw .integrity("\(entry.uri) changed while its forms were written (hash is not \(entry.hash)); run routes again")
        }
        return bytes
    }

    /// The frames pack and the solid pack's files, for a release that meant to carry a pack but outgrew it.
    func packs(of files: [RouteEntry], folder: String, root: String, algorithm: ContentHash.Algorithm) throws(CenariusError) -> (PackWriter, [[UInt8]]?) {
        var pack = try PackWriter(folder: folder, name: "all", algorithm: algorithm)
        var solid: [[UInt8]]? = []
        var solidBytes = 0
        for entry in files {
            let bytes = try verifiedBytes(entry)
            solidBytes += bytes.count
            if solidBytes <= SolidPack.maxContent { solid?.append(bytes) } else { solid = nil }
            // Not from the store: a request per file would cost more than compressing it.
            if let stored = storedForm(entry.hash, of: bytes, root: root, fromStore: false) { try pack.append(stored) } else { try pack.append(try Zstd.compress(bytes)) }
        }
        return (pack, solid)
    }

    /// A file's form, or its exact bytes when zstd cannot shrink it, under its store name.
    func writeForm(of entry: RouteEntry, run: inout Run) throws(CenariusError) {
        let bytes = try verifiedBytes(entry)
        var compressed = storedForm(entry.hash, of: bytes, root: run.root) ?? []
        if compressed.isEmpty { compressed = try Zstd.compress(bytes) }
        if compressed.count < bytes.count {
            run.index.plain.remove(entry.hash)
            try write(compressed, to: ReleaseIndex.formPath(entry.hash), root: run.root)
            run.summary.compressedForms += 1
            run.summary.compressedBytes += Int64(compressed.count)
            run.formBytes[entry.hash] = Int64(compressed.count)
        } else {
            try write(bytes, to: ReleaseIndex.plainPath(entry.hash), root: run.root)
        }
    }

    /// The form an earlier run wrote for this file (or the store holds, or was read from it), when it decodes to exactly its bytes.
    func storedForm(_ hash: ContentHash, of bytes: [UInt8], root: String, fromStore: Bool = true) -> [UInt8]? {
        let path = FileSystem.join(root, ReleaseIndex.formPath(hash))
        let form: [UInt8]?
        if let size = FileSystem.regularFileSize(path) {
            form = size < Int64(bytes.count) ? try? FileSystem.readFile(path, limit: Int(size)) : nil
        } else if let held = heldForms[ReleaseIndex.formPath(hash)] {
            form = held
        } else {
            form = fromStore && storeHolds?(ReleaseIndex.formPath(hash)) == true ? storeObject(ReleaseIndex.formPath(hash)) : nil
        }
        guard let form, form.count < bytes.count, (try? Zstd.decompress(form, limit: bytes.count)) == bytes else { return nil }
        return form
    }

    /// A patch the store holds already (an earlier release made it), when it decodes to exactly the file.
    func storedPatch(_ pair: ReleaseIndex.Patch, of bytes: [UInt8], base: [UInt8], holds: (String) -> Bool) -> [UInt8]? {
        let key = ReleaseIndex.patchPath(pair)
        guard storeHolds?(key) == true, holds(key), let patch = storeObject(key),
              (try? Zstd.decompress(patch, prefix: base, limit: bytes.count)) == bytes else { return nil }
        return patch
    }

    /// A patch of `patchesByName`, without its base.
    func heldPatch(_ pair: ReleaseIndex.Patch, holds: (String) -> Bool) -> [UInt8]? {
        let key = ReleaseIndex.patchPath(pair)
        guard patchesByName.contains(pair), storeHolds?(key) == true, holds(key) else { return nil }
        return storeObject(key)
    }

    /// Writes a form under its name (once: a form already there decodes to the same file).
    func write(_ bytes: [UInt8], to relative: String, root: String) throws(CenariusError) {
        let path = FileSystem.join(root, relative)
        if FileSystem.regularFileSize(path) == nil {
            try FileSystem.writeAtomically(bytes, to: path, durable: false)
        }
    }
}

extension StreamingHasher {
    package static func hash(_ bytes: [UInt8], _ algorithm: ContentHash.Algorithm) -> ContentHash {
        var hasher = StreamingHasher(algorithm)
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
