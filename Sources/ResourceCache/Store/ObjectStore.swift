package import RouteSync
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

    /// Moves a verified temporary file into the store, by descriptor: a link planted at
    /// `objects/<h0h1>` or in `tmp/` is removed, never followed (G5).
    package func adopt(_ temporary: String, as hash: ContentHash) throws(CenariusError) {
        let cache = try OpenedCache(layout: layout)
        try adopt(temporary, as: hash, in: cache)
    }

    package func adopt(_ temporary: String, as hash: ContentHash, in cache: OpenedCache) throws(CenariusError) {
        guard let shard = try cache.shard(of: hash) else { throw .storage("cannot create directory for \(layout.object(hash))") }
        if FileSystem.parentDirectory(of: temporary) == layout.tmp {
            try cache.tmp.rename(String(temporary.dropFirst(layout.tmp.count + 1)), to: shard, as: hash.hex)
        } else if renameat(AT_FDCWD, temporary, shard.descriptor, hash.hex) != 0 {
            throw FileSystem.failure("cannot store object", layout.object(hash))
        }
    }

    /// Copies a file from outside the cache (the preset) into the store, hashing as it copies;
    /// false when the bytes do not match `hash`.
    package func importCopy(of source: String, as hash: ContentHash, in cache: OpenedCache) throws(CenariusError) -> Bool {
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
            return false
        }
        try adopt(temporary, as: hash, in: cache)
        return true
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
