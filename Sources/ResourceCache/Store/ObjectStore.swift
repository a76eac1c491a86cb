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

    /// Moves a verified temporary file into the store. Presence means verified, and a later sync
    /// counts on presence alone: so the bytes reach the disk before the name does (fsync of the
    /// file, then of its folder after the rename). Without it a power cut could leave an object
    /// whose name survived and whose bytes did not, linked into the next generation.
    package func adopt(_ temporary: String, as hash: ContentHash) throws(CenariusError) {
        let destination = layout.object(hash)
        try Self.syncFile(temporary)
        if rename(temporary, destination) != 0 {
            guard errno == ENOENT else { throw FileSystem.failure("cannot store object", destination) }
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: destination))
            guard rename(temporary, destination) == 0 else { throw FileSystem.failure("cannot store object", destination) }
        }
        try Self.syncFile(FileSystem.parentDirectory(of: destination), directory: true)
    }

    static func syncFile(_ path: String, directory: Bool = false) throws(CenariusError) {
        let fd = open(path, (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.failure("cannot open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileSystem.failure("cannot sync", path) }
    }

    /// Copies a file from outside the cache (the preset) into the store, hashing as it copies;
    /// false when the bytes do not match `hash`.
    package func importCopy(of source: String, as hash: ContentHash) throws(CenariusError) -> Bool {
        let temporary = temporaryPath(hash)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", temporary) }
        let actual: ContentHash
        do {
            (actual, _) = try FileSystem.hashFile(source, algorithm: hash.algorithm, copyTo: fd)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard actual == hash else {
            unlink(temporary)
            return false
        }
        try adopt(temporary, as: hash)
        return true
    }

    /// All objects, for `verify`.
    package func all() -> [(hash: ContentHash, path: String)] {
        var out: [(ContentHash, String)] = []
        for shard in FileSystem.listDirectory(layout.objects) {
            let dir = layout.objects + "/" + shard
            for name in FileSystem.listDirectory(dir) {
                if let hash = ContentHash(hex: name) { out.append((hash, dir + "/" + name)) }
            }
        }
        return out
    }
}
