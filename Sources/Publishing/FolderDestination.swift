#if canImport(Glibc)
import Glibc
#endif
package import RouteSync

/// A remote that is a folder (what nginx or any static server serves). Every object is written
/// to a temporary name and renamed over its own, durably, so a server reading the folder while
/// `publish` runs, or a crash, shows the old object or the new one, never a part.
package struct FolderDestination: Destination {
    package let root: String

    package init(root: String) {
        self.root = root
    }

    package var description: String { root }

    package func list(prefix: String) throws(CenariusError) -> [String: StoredObject] {
        var found: [String: StoredObject] = [:]
        // Walks only the folder the prefix names, so listing `_cenarius/` never reads the site.
        let folder = prefix.hasSuffix("/") ? String(prefix.dropLast()) : FileSystem.parentDirectory(of: prefix)
        let start = folder == "." || folder.isEmpty ? "" : folder
        walk(start, into: &found, prefix: prefix)
        return found
    }

    private func walk(_ relative: String, into found: inout [String: StoredObject], prefix: String) {
        let path = relative.isEmpty ? root : FileSystem.join(root, relative)
        for name in FileSystem.listDirectory(path) {
            let key = relative.isEmpty ? name : relative + "/" + name
            // Another writer's half-written object is not one yet.
            if name.contains(".tmp-") || key == LockHolder.key { continue }
            var info = stat()
            guard lstat(FileSystem.join(root, key), &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                if key.hasPrefix(prefix) || prefix.hasPrefix(key + "/") { walk(key, into: &found, prefix: prefix) }
            case S_IFREG where key.hasPrefix(prefix):
                found[key] = StoredObject(size: Int64(info.st_size), modified: Double(info.st_mtim.tv_sec))
            default:
                continue
            }
        }
    }

    package func read(_ key: String, limit: Int) throws(CenariusError) -> [UInt8]? {
        do {
            return try FileSystem.readFile(FileSystem.join(root, key), limit: limit)
        } catch where error.code == .notFound {
            return nil
        }
    }

    package func write(_ uploads: [Upload], progress: (Upload) -> Void) throws(CenariusError) {
        for upload in uploads {
            let path = FileSystem.join(root, upload.key)
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
            let before = FileSystem.modificationTime(path)
            let bytes = if case .copy(let source) = upload.body { try FileSystem.readFile(FileSystem.join(root, source)) } else { try upload.bytes() }
            try FileSystem.writeAtomically(bytes, to: path)
            if let before { FileSystem.advanceModificationTime(path, past: before) }
            progress(upload)
        }
    }

    package func delete(_ keys: [String], progress: (String) -> Void) throws(CenariusError) {
        for key in keys {
            let path = FileSystem.join(root, key)
            guard unlink(path) == 0 || errno == ENOENT else { throw FileSystem.failure("cannot delete", path) }
            progress(key)
        }
    }
}
