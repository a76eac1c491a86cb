package import RouteSync
import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Verified content by hash. An object is only ever created by renaming a file whose bytes
/// were hashed on their way in, so presence means verified (G1).
package struct ObjectStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    package func contains(_ hash: ContentHash) -> Bool {
        FileSystem.regularFileSize(layout.object(hash)) != nil
    }

    package func path(_ hash: ContentHash) -> String { layout.object(hash) }

    /// A temporary path for downloading `hash`, inside the cache (same filesystem, so adopt is a rename).
    package func temporaryPath(_ hash: ContentHash) -> String { layout.tmp + "/" + hash.hex + ".part" }

    /// Moves verified temporary files into the store, by descriptor: a link planted at
    /// `objects/<h0h1>` or in `tmp/` is removed, never followed (G5). Presence means verified, and a
    /// later sync counts on presence alone, so the bytes reach the disk before the name does:
    /// without it a power cut could leave an object whose name survived and whose bytes did not,
    /// linked into the next generation.
    ///
    /// All of a step's files are adopted at once: one syncfs makes all their bytes
    /// durable before any of them gets its name, where an fsync of each file and of its folder
    /// cost two disk flushes per file (on a first install of 300 files, a tenth of a second: a
    /// round trip of a slow link, B8). The names need no flush of their own: the commit's syncfs
    /// makes them durable before a generation links them, and a name lost to a power cut before
    /// that only means the file is fetched again. Stops at the first file that cannot be stored.
    package func adoptAll(_ files: [(temporary: String, hash: ContentHash)], in cache: OpenedCache) throws(CenariusError) {
        guard !files.isEmpty else { return }
        if cplatform_syncfs(cache.root.descriptor) != 0 { throw FileSystem.failure("cannot sync", layout.root) }
        var shards: [Substring: CacheFolder] = [:]
        for (temporary, hash) in files {
            let prefix = hash.hex.prefix(2)
            if shards[prefix] == nil { shards[prefix] = try cache.shard(of: hash) }
            guard let shard = shards[prefix] else { throw .storage("cannot create directory for \(layout.object(hash))") }
            try move(temporary, as: hash, into: shard, cache: cache)
        }
    }

    private func move(_ temporary: String, as hash: ContentHash, into shard: CacheFolder, cache: OpenedCache) throws(CenariusError) {
        if FileSystem.parentDirectory(of: temporary) == layout.tmp {
            try cache.tmp.rename(String(temporary.dropFirst(layout.tmp.count + 1)), to: shard, as: hash.hex)
        } else if renameat(AT_FDCWD, temporary, shard.descriptor, hash.hex) != 0 {
            throw FileSystem.failure("cannot store object", layout.object(hash))
        }
    }

    /// Copies a file from outside the cache (the preset) into `tmp/`, hashing as it copies: the
    /// temporary path to adopt, or nil when the bytes do not match `hash`.
    package func importCopy(of source: String, as hash: ContentHash, in cache: OpenedCache) throws(CenariusError) -> String? {
        let name = hash.hex + ".part"
        let temporary = temporaryPath(hash)
        let fd = cache.tmp.createFile(name)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", temporary) }
        let actual: ContentHash
        do {
            (actual, _) = try FileSystem.hashFile(source, algorithm: hash.algorithm, copyTo: fd)
            close(fd)
        } catch {
            close(fd)
            cache.tmp.remove(name)
            throw error
        }
        guard actual == hash else {
            cache.tmp.remove(name)
            return nil
        }
        return temporary
    }

    /// All objects, for `verify`.
    package func all() -> [(hash: ContentHash, path: String)] {
        var out: [(ContentHash, String)] = []
        // Real folders and regular files only: nothing planted leads the listing outside (G5).
        guard let objects = CacheFolder.at(layout.root)?.existingFolder("objects") else { return [] }
        for name in objects.entries() {
            guard let shard = objects.existingFolder(name) else { continue }
            for name in shard.entries() {
                guard let hash = ContentHash(hex: name), let info = shard.status(name), info.st_mode & S_IFMT == S_IFREG else { continue }
                out.append((hash, shard.path + "/" + name))
            }
        }
        return out
    }
}
