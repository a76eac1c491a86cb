#if canImport(Glibc)
import Glibc
#endif

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

    /// A pack being written: its file, hash and size so far.
    private struct PackWriter {
        let temporary: String
        let fd: Int32
        var hasher: StreamingHasher
        var size: Int64 = 0
        var bases: [ContentHash?] = []

        init(folder: String, name: String, algorithm: ContentHash.Algorithm) throws(CenariusError) {
            temporary = folder + "/pack/.building-\(getpid())-\(name)"
            fd = FileSystem.createFile(temporary)
            guard fd >= 0 else { throw FileSystem.failure("cannot create", temporary) }
            hasher = StreamingHasher(algorithm)
        }

        mutating func append(_ frame: [UInt8], base: ContentHash? = nil) throws(CenariusError) {
            size += Int64(frame.count)
            frame.withUnsafeBytes { hasher.update($0) }
            bases.append(base)
            guard FileSystem.writeAll(fd, frame) else { throw FileSystem.failure("cannot write", temporary) }
        }

        /// Moves the pack to its name under `root`; nil (and nothing left behind) when `keep` is false.
        func finish(root: String, keep: Bool) throws(CenariusError) -> ContentHash? {
            close(fd)
            guard keep else {
                unlink(temporary)
                return nil
            }
            let hash = hasher.finalize()
            let path = FileSystem.join(root, ReleaseIndex.packPath(hash))
            guard rename(temporary, path) == 0 else { throw FileSystem.failure("cannot write", path) }
            return hash
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
    /// An object's bytes from the store (`publish`): a form or patch it holds is read and checked
    /// to decode to its file rather than made again, which for a large file costs seconds.
    package var storeRead: ((String) -> [UInt8]?)?

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

    package func publish() throws(CenariusError) -> Published {
        let root = outputRoot ?? release.root
        let folder = FileSystem.join(root, ReleaseIndex.folder)
        for sub in ["z", "p", "f", "pack", "index"] { try FileSystem.makeDirectories(folder + "/" + sub) }
        let algorithm = release.table.entries.first?.hash.algorithm ?? .md5
        let matches = olds.map { BaseMatch($0.table) }
        var index = ReleaseIndex(table: ReleaseIndex.tableDigest(tableBytes))
        var summary = Summary()

        let holds = { (key: String) in FileSystem.regularFileSize(FileSystem.join(root, key)) != nil || storeHolds?(key) == true }
        let earlier = (reusing ?? (try? ReleaseIndex.parse(FileSystem.readFile(FileSystem.join(root, ReleaseIndex.indexPath(table: index.table)), limit: 32 << 20),
                                                         source: ReleaseIndex.indexPath(table: index.table)))).flatMap { $0.table == index.table ? $0 : nil }
        let files = release.table.packOrder
        let reusedPack = earlier?.pack.flatMap { $0.files == files.count && holds(ReleaseIndex.packPath($0.hash)) ? $0 : nil }
        let reusedSolid = earlier?.solidPack.flatMap { $0.files == files.count && holds(ReleaseIndex.packPath($0.hash)) ? $0 : nil }
        // A release that carried a pack (a rollback to it) carries it again, with its delta pack from that pack's table.
        let reusedCarried = reusedSolid != nil ? nil : earlier.flatMap { earlier in
            earlier.carriedPack.flatMap { carried in
                holds(ReleaseIndex.packPath(carried.pack.hash)) && earlier.deltaPacks.allSatisfy({ $0.from != carried.from || holds(ReleaseIndex.packPath($0.hash)) }) ? carried : nil
            }
        }
        var patched = Set<ReleaseIndex.Patch>()
        for pair in earlier?.patches ?? [] where holds(ReleaseIndex.patchPath(pair)) && patched.insert(pair).inserted {
            index.patches.append(pair)
        }
        let carriedFrom = carry.flatMap { carry in olds.firstIndex { ReleaseIndex.tableDigest($0.tableBytes) == carry.from } }
        // Carried: no pack is made while the files go by, and files the store and every OLD hold are not compressed again.
        let carrying = carriedFrom != nil && (carry?.releases ?? .max) < Carry.maxReleases && reusedSolid == nil && reusedCarried == nil && !files.isEmpty
        var pack = reusedPack == nil && !carrying && reusedCarried == nil ? try PackWriter(folder: folder, name: "all", algorithm: algorithm) : nil
        // Per OLD, the frames a device holding it needs, in one file: a release in one request.
        var deltas: [PackWriter] = []
        for i in olds.indices { deltas.append(try PackWriter(folder: folder, name: "\(i)", algorithm: algorithm)) }
        let oldSets = olds.map { Set($0.table.entries.map(\.hash)) }

        // The solid pack's files, kept while the site fits in memory (SolidPack.maxContent).
        var solid: [[UInt8]]? = reusedSolid == nil && !carrying && reusedCarried == nil ? [] : nil
        var solidBytes = 0
        // A pack of this very table is made or taken as it is: files it holds may stay at their uris alone.
        let siteBytes = files.reduce(Int64(0)) { $0 + ($1.size ?? Int64(SolidPack.maxContent)) }
        let packsHoldAll = formsAtURI && !carrying && reusedCarried == nil && (reusedSolid != nil || solid != nil && siteBytes <= SolidPack.maxContent)
        // A file that the store holds in a pack alone: in this table's solid pack, or, for a release
        // that carried one (a rollback to it), where the earlier index of this table said it was.
        let packedAlone = { (hash: ContentHash) in
            !holds(ReleaseIndex.formPath(hash)) && (packsHoldAll || formsAtURI && reusedCarried != nil && earlier?.storedPlain == false && earlier?.plain.contains(hash) == true)
        }
        var atURI: [RouteEntry] = []
        // The solid pack (most of a first publish's CPU) is compressed on another core while the
        // files' forms are made here: the site is read first, as the pack holds it in memory anyway.
        var solidMade: Pending<[UInt8]>?
        if solid != nil, siteBytes <= SolidPack.maxContent, !files.isEmpty {
            var contents: [[UInt8]] = []
            for entry in files { contents.append(try verifiedBytes(entry)) }
            let site = contents
            solidMade = Pending { () throws(CenariusError) in try SolidPack.make(site) }
            solid = contents
        }
        for (ordinal, entry) in files.enumerated() {
            let bytes = try solidMade != nil ? solid![ordinal] : verifiedBytes(entry)
            solidBytes += bytes.count
            if solidMade == nil { if solidBytes <= SolidPack.maxContent { solid?.append(bytes) } else { solid = nil } }
            summary.files += 1
            summary.plainBytes += Int64(bytes.count)
            if carrying, oldSets.allSatisfy({ $0.contains(entry.hash) }) {
                if holds(ReleaseIndex.formPath(entry.hash)) { continue }
                if holds(ReleaseIndex.plainPath(entry.hash)) {
                    index.plain.insert(entry.hash)
                    continue
                }
                if formsAtURI {
                    // The carried pack, whose table is one of `olds`, holds it.
                    index.plain.insert(entry.hash)
                    atURI.append(entry)
                    continue
                }
            }
            // What changed since a base release keeps its form: a device on an older release, or a
            // bundle from one, that no delta pack starts from fetches it on its own.
            let alone = packedAlone(entry.hash) && oldSets.allSatisfy { $0.contains(entry.hash) }
            if alone, pack == nil {
                // Its pack is taken as it is and no delta pack wants its frame: nothing to compress.
                index.plain.insert(entry.hash)
                atURI.append(entry)
                continue
            }
            let compressed: [UInt8]
            if let stored = storedForm(entry.hash, of: bytes, root: root) {
                compressed = stored
                summary.reusedForms += 1
            } else {
                compressed = try Zstd.compress(bytes)
            }
            // The packs hold every file as a frame, even one zstd cannot shrink: the frames are found
            // by decoding, one after another, so none may be missing.
            try pack?.append(compressed)
            if alone {
                // In the packs and at its uri: an object of its own only if no pack is kept after all (below).
                index.plain.insert(entry.hash)
                atURI.append(entry)
            } else if compressed.count < bytes.count {
                try write(compressed, to: ReleaseIndex.formPath(entry.hash), root: root)
                summary.compressedForms += 1
                summary.compressedBytes += Int64(compressed.count)
            } else {
                // A copy, never a link: a build that rewrites the file in place would change the object.
                index.plain.insert(entry.hash)
                try write(bytes, to: ReleaseIndex.plainPath(entry.hash), root: root)
            }
            for (k, (old, match)) in zip(olds, matches).enumerated() where !oldSets[k].contains(entry.hash) {
                var frame = compressed
                var frameBase: ContentHash?
                if let base = match.base(for: entry.uri, size: Int64(bytes.count)), base.size + Int64(bytes.count) <= Self.patchWindowBudget {
                    let pair = ReleaseIndex.Patch(target: entry.hash, base: base.hash)
                    // A base may be missing: `publish` fetches only those the remote still holds.
                    if let baseBytes = try? FileSystem.readFile(FileSystem.join(old.root, base.uri.value)),
                       StreamingHasher.hash(baseBytes, base.hash.algorithm) == base.hash {
                        let patch: [UInt8]
                        if let stored = storedPatch(pair, of: bytes, base: baseBytes, holds: holds) { patch = stored } else { patch = try Zstd.compress(bytes, prefix: baseBytes) }
                        // Worth it only when smaller than the compressed form and the file.
                        if patch.count < min(compressed.count, bytes.count) {
                            frame = patch
                            frameBase = base.hash
                            if patched.insert(pair).inserted {
                                try write(patch, to: ReleaseIndex.patchPath(pair), root: root)
                                index.patches.append(pair)
                                summary.patches += 1
                                summary.patchBytes += Int64(patch.count)
                            }
                        }
                    }
                }
                try deltas[k].append(frame, base: frameBase)
            }
        }
        if carrying, let carry, let k = carriedFrom {
            if Double(deltas[k].size) <= Carry.maxShare * Double(carry.pack.size) {
                index.carriedPack = ReleaseIndex.CarriedPack(from: carry.from, pack: carry.pack, releases: carry.releases + 1)
                summary.carriedPack = true
            } else {
                // Past the threshold: a new pack after all, from the files again.
                (pack, solid) = try packs(of: files, folder: folder, root: root, algorithm: algorithm)
            }
        }
        if let pack, let hash = try pack.finish(root: root, keep: pack.size < summary.plainBytes && !files.isEmpty) {
            index.pack = ReleaseIndex.Pack(hash: hash, size: pack.size, files: files.count)
            summary.packBytes = pack.size
        } else if let reusedPack {
            index.pack = reusedPack
            summary.packBytes = reusedPack.size
            summary.reusedPacks = true
        }
        if let reusedSolid {
            index.solidPack = reusedSolid
            summary.solidPackBytes = reusedSolid.size
        }
        // What a first install fetches: the pack's files with the context of those before each.
        if let solid, !files.isEmpty {
            let bytes: [UInt8]
            if let solidMade { bytes = try solidMade.wait() } else { bytes = try SolidPack.make(solid) }
            if bytes.count < (index.pack?.size ?? summary.plainBytes) {
                let hash = StreamingHasher.hash(bytes, algorithm)
                try write(bytes, to: ReleaseIndex.packPath(hash), root: root)
                index.solidPack = ReleaseIndex.Pack(hash: hash, size: Int64(bytes.count), files: files.count)
                summary.solidPackBytes = Int64(bytes.count)
            }
        }
        for (old, delta) in zip(olds, deltas) {
            guard let hash = try delta.finish(root: root, keep: !delta.bases.isEmpty) else { continue }
            index.deltaPacks.append(ReleaseIndex.DeltaPack(from: ReleaseIndex.tableDigest(old.tableBytes), hash: hash, size: delta.size, bases: delta.bases))
        }
        if let reusedCarried, let earlier {
            index.carriedPack = reusedCarried
            summary.carriedPack = true
            summary.reusedPacks = true
            if !index.deltaPacks.contains(where: { $0.from == reusedCarried.from }), let delta = earlier.deltaPacks.first(where: { $0.from == reusedCarried.from }) {
                index.deltaPacks.append(delta)
            }
        }
        if index.solidPack == nil && index.carriedPack == nil {
            // No solid pack kept (a site zstd cannot shrink): the store holds every file whole after all.
            for entry in atURI { try writeForm(of: entry, index: &index, summary: &summary, root: root) }
        } else {
            summary.filesAtURI = atURI.count
        }
        // The table compressed, with this index as its second frame: the store object a head names
        // (`_cenarius/t/<O>.zst`, which HeadWriter writes), a first install's table and index in one request.
        let table = try Zstd.compress(tableBytes)
        index.tableForm = tableFormBeside && table.count < tableBytes.count
        index.head = head
        index.storedPlain = summary.filesAtURI == 0
        index.plain = index.plain.compacted(for: Set(files.map(\.hash)))
        let indexBytes = index.serialized()
        // Under the table's hash, for devices that predate heads: written once, like every name
        // under `_cenarius/`. A release of a table published before keeps that index there (its
        // objects are still in the store); the head names this one by its own hash.
        let legacyIndex = try Self.writeLegacyIndex(indexBytes, table: index.table, root: root)
        let tableForm = table.count < tableBytes.count ? table + (try Zstd.compress(indexBytes)) : nil
        if tableFormBeside, let tableForm {
            try FileSystem.writeAtomically(tableForm, to: FileSystem.join(root, ReleaseIndex.tablePath(routesName)), durable: false)
        }
        summary.index = FileSystem.join(root, ReleaseIndex.indexPath(table: index.table))
        return Published(summary: summary, index: indexBytes, tableForm: tableForm, legacyIndex: legacyIndex)
    }

    /// A file of the build as the table names it: one that changed since `routes` hashed it is refused.
    private func verifiedBytes(_ entry: RouteEntry) throws(CenariusError) -> [UInt8] {
        let bytes = try FileSystem.readFile(FileSystem.join(release.root, entry.uri.value))
        guard StreamingHasher.hash(bytes, entry.hash.algorithm) == entry.hash else {
            throw .integrity("\(entry.uri) changed while its forms were written (hash is not \(entry.hash)); run routes again")
        }
        return bytes
    }

    /// The frames pack and the solid pack's files, for a release that meant to carry a pack but outgrew it.
    private func packs(of files: [RouteEntry], folder: String, root: String, algorithm: ContentHash.Algorithm) throws(CenariusError) -> (PackWriter, [[UInt8]]?) {
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
    private func writeForm(of entry: RouteEntry, index: inout ReleaseIndex, summary: inout Summary, root: String) throws(CenariusError) {
        let bytes = try verifiedBytes(entry)
        var compressed = storedForm(entry.hash, of: bytes, root: root) ?? []
        if compressed.isEmpty { compressed = try Zstd.compress(bytes) }
        if compressed.count < bytes.count {
            index.plain.remove(entry.hash)
            try write(compressed, to: ReleaseIndex.formPath(entry.hash), root: root)
            summary.compressedForms += 1
            summary.compressedBytes += Int64(compressed.count)
        } else {
            try write(bytes, to: ReleaseIndex.plainPath(entry.hash), root: root)
        }
    }

    /// The form an earlier run wrote for this file (or the store holds), when it decodes to exactly its bytes.
    private func storedForm(_ hash: ContentHash, of bytes: [UInt8], root: String, fromStore: Bool = true) -> [UInt8]? {
        let path = FileSystem.join(root, ReleaseIndex.formPath(hash))
        let form: [UInt8]?
        if let size = FileSystem.regularFileSize(path) {
            form = size < Int64(bytes.count) ? try? FileSystem.readFile(path, limit: Int(size)) : nil
        } else {
            form = fromStore && storeHolds?(ReleaseIndex.formPath(hash)) == true ? storeRead?(ReleaseIndex.formPath(hash)) : nil
        }
        guard let form, form.count < bytes.count, (try? Zstd.decompress(form, limit: bytes.count)) == bytes else { return nil }
        return form
    }

    /// A patch the store holds already (an earlier release made it), when it decodes to exactly the file.
    private func storedPatch(_ pair: ReleaseIndex.Patch, of bytes: [UInt8], base: [UInt8], holds: (String) -> Bool) -> [UInt8]? {
        let key = ReleaseIndex.patchPath(pair)
        guard let storeRead, storeHolds?(key) == true, holds(key), let patch = storeRead(key),
              (try? Zstd.decompress(patch, prefix: base, limit: bytes.count)) == bytes else { return nil }
        return patch
    }

    /// Writes a form under its name (once: a form already there decodes to the same file).
    private func write(_ bytes: [UInt8], to relative: String, root: String) throws(CenariusError) {
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
