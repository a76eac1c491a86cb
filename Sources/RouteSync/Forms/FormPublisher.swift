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
        package init(root: String, table: RouteTable) {
            self.root = root
            self.table = table
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
    }

    /// The table's file name (`--routes-name`): its compressed form is `_cenarius/<name>.zst`.
    package var routesName = "Routes.json"

    package init(release: Release, tableBytes: [UInt8], olds: [Release]) {
        self.release = release
        self.tableBytes = tableBytes
        self.olds = olds
    }

    package func publish() throws(CenariusError) -> Summary {
        let folder = FileSystem.join(release.root, ReleaseIndex.folder)
        for sub in ["z", "p", "pack", "index"] { try FileSystem.makeDirectories(folder + "/" + sub) }
        let algorithm = release.table.entries.first?.hash.algorithm ?? .md5
        let matches = olds.map { BaseMatch($0.table) }
        let oldHashes = Set(olds.flatMap { $0.table.entries.map(\.hash) })
        var index = ReleaseIndex(table: ReleaseIndex.tableDigest(tableBytes))
        var summary = Summary()

        let packTemporary = folder + "/pack/.building-\(getpid())"
        let pack = FileSystem.createFile(packTemporary)
        guard pack >= 0 else { throw FileSystem.failure("cannot create", packTemporary) }
        defer { close(pack) }
        var packHasher = StreamingHasher(algorithm)
        var packSize: Int64 = 0

        let files = release.table.packOrder
        for entry in files {
            let bytes = try FileSystem.readFile(FileSystem.join(release.root, entry.uri.value))
            guard StreamingHasher.hash(bytes, entry.hash.algorithm) == entry.hash else {
                throw .integrity("\(entry.uri) changed while its forms were written (hash is not \(entry.hash)); run routes again")
            }
            summary.files += 1
            summary.plainBytes += Int64(bytes.count)
            let compressed = try Zstd.compress(bytes)
            // The pack holds every file as a frame, even one zstd cannot shrink: the frames are found
            // by decoding, one after another, so none may be missing.
            packSize += Int64(compressed.count)
            compressed.withUnsafeBytes { packHasher.update($0) }
            guard FileSystem.writeAll(pack, compressed) else { throw FileSystem.failure("cannot write", packTemporary) }
            if compressed.count < bytes.count {
                try write(compressed, to: ReleaseIndex.formPath(entry.hash))
                summary.compressedForms += 1
                summary.compressedBytes += Int64(compressed.count)
            } else {
                index.plain.insert(entry.hash)
            }
            guard !oldHashes.contains(entry.hash) else { continue }
            var best = min(compressed.count, bytes.count)
            var bases = Set<ContentHash>()
            for (old, match) in zip(olds, matches) {
                guard let base = match.base(for: entry.uri, size: Int64(bytes.count)), bases.insert(base.hash).inserted,
                      base.size + Int64(bytes.count) <= Self.patchWindowBudget else { continue }
                let baseBytes = try FileSystem.readFile(FileSystem.join(old.root, base.uri.value))
                guard StreamingHasher.hash(baseBytes, base.hash.algorithm) == base.hash else { continue }
                let patch = try Zstd.compress(bytes, prefix: baseBytes)
                // Worth it only when smaller than the best form so far (a patch from an older release must beat a newer one's).
                guard patch.count < best else { continue }
                best = patch.count
                let pair = ReleaseIndex.Patch(target: entry.hash, base: base.hash)
                try write(patch, to: ReleaseIndex.patchPath(pair))
                index.patches.append(pair)
                summary.patches += 1
                summary.patchBytes += Int64(patch.count)
            }
        }
        if packSize < summary.plainBytes && !files.isEmpty {
            let hash = packHasher.finalize()
            let path = FileSystem.join(release.root, ReleaseIndex.packPath(hash))
            guard rename(packTemporary, path) == 0 else { throw FileSystem.failure("cannot write", path) }
            index.pack = ReleaseIndex.Pack(hash: hash, size: packSize, files: files.count)
            summary.packBytes = packSize
        } else {
            unlink(packTemporary)
        }
        // The table compressed, which devices that saw an index poll instead of the table, with
        // this index as a second frame: a release then costs no request for it. It changes with
        // every release: written in place, beside the table it is the form of.
        let tableForm = FileSystem.join(release.root, ReleaseIndex.tablePath(routesName))
        let table = try Zstd.compress(tableBytes)
        index.tableForm = table.count < tableBytes.count
        let indexBytes = index.serialized()
        let indexPath = FileSystem.join(release.root, ReleaseIndex.indexPath(table: index.table))
        try FileSystem.writeAtomically(indexBytes, to: indexPath)
        if index.tableForm {
            try FileSystem.writeAtomically(table + Zstd.compress(indexBytes), to: tableForm, durable: false)
        } else {
            unlink(tableForm)
        }
        summary.index = indexPath
        return summary
    }

    /// Writes a form under its name (once: a form already there decodes to the same file).
    private func write(_ bytes: [UInt8], to relative: String) throws(CenariusError) {
        let path = FileSystem.join(release.root, relative)
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
