#if canImport(Glibc)
import Glibc
#endif

/// `routes NEW --compress [--delta-from OLD]...`: writes under `NEW/_cenarius/` a zstd form of
/// every file, patches from the files of older releases for every file they lack, one pack of
/// the zstd forms for a first install, and the index naming them all (ReleaseIndex). A form is
/// kept only when it is smaller than what it replaces. Everything is named by its own hash, so
/// forms shared with earlier releases are written once and a CDN may cache them forever.
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

    package init(release: Release, tableBytes: [UInt8], olds: [Release]) {
        self.release = release
        self.tableBytes = tableBytes
        self.olds = olds
    }

    package func publish() throws(CenariusError) -> Summary {
        let folder = FileSystem.join(release.root, ReleaseIndex.folder)
        for sub in ["z", "pack", "index"] { try FileSystem.makeDirectories(folder + "/" + sub) }
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
        var members: [ReleaseIndex.Member] = []
        var packSize: Int64 = 0

        var seen = Set<ContentHash>()
        for entry in release.table.entries where seen.insert(entry.hash).inserted {
            let bytes = try FileSystem.readFile(FileSystem.join(release.root, entry.uri.value))
            guard StreamingHasher.hash(bytes, entry.hash.algorithm) == entry.hash else {
                throw .integrity("\(entry.uri) changed while its forms were written (hash is not \(entry.hash)); run routes again")
            }
            summary.files += 1
            summary.plainBytes += Int64(bytes.count)
            var forms = ReleaseIndex.Forms()
            let compressed = try Zstd.compress(bytes)
            // The pack holds every file as a frame, even one zstd cannot shrink: one request each way.
            members.append(ReleaseIndex.Member(hash: entry.hash, offset: packSize, length: Int64(compressed.count)))
            packSize += Int64(compressed.count)
            compressed.withUnsafeBytes { packHasher.update($0) }
            guard FileSystem.writeAll(pack, compressed) else { throw FileSystem.failure("cannot write", packTemporary) }
            if compressed.count < bytes.count {
                forms.zstd = try write(compressed, algorithm: algorithm, folder: folder)
                summary.compressedForms += 1
                summary.compressedBytes += Int64(compressed.count)
            }
            if !oldHashes.contains(entry.hash) {
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
                    forms.patches.append(ReleaseIndex.Patch(base: base.hash, form: try write(patch, algorithm: algorithm, folder: folder)))
                    summary.patches += 1
                    summary.patchBytes += Int64(patch.count)
                }
            }
            if forms.zstd != nil || !forms.patches.isEmpty { index.files[entry.hash] = forms }
        }
        if packSize < summary.plainBytes && !members.isEmpty {
            let hash = packHasher.finalize()
            let path = FileSystem.join(release.root, ReleaseIndex.packPath(hash))
            guard rename(packTemporary, path) == 0 else { throw FileSystem.failure("cannot write", path) }
            index.packs = [ReleaseIndex.Pack(form: .init(hash: hash, size: packSize), members: members)]
            summary.packBytes = packSize
        } else {
            unlink(packTemporary)
        }
        let indexPath = FileSystem.join(release.root, ReleaseIndex.indexPath(table: index.table))
        try FileSystem.writeAtomically(index.serialized(), to: indexPath)
        summary.index = indexPath
        return summary
    }

    /// Writes a form under its own hash (once: a form already there is the same bytes).
    private func write(_ bytes: [UInt8], algorithm: ContentHash.Algorithm, folder: String) throws(CenariusError) -> ReleaseIndex.Form {
        let hash = StreamingHasher.hash(bytes, algorithm)
        let path = FileSystem.join(release.root, ReleaseIndex.formPath(hash))
        if FileSystem.regularFileSize(path) != Int64(bytes.count) {
            try FileSystem.writeAtomically(bytes, to: path, durable: false)
        }
        return ReleaseIndex.Form(hash: hash, size: Int64(bytes.count))
    }
}

extension StreamingHasher {
    package static func hash(_ bytes: [UInt8], _ algorithm: ContentHash.Algorithm) -> ContentHash {
        var hasher = StreamingHasher(algorithm)
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
