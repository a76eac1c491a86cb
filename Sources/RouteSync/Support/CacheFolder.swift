#if canImport(Glibc)
package import Glibc
#endif

/// A folder of the cache, opened: a descriptor got with `O_DIRECTORY | O_NOFOLLOW`, relative to
/// which every create, rename and delete inside it is made (`openat`, `renameat`, `linkat`,
/// `unlinkat`). A symlink, FIFO or any other entry found where a folder should be is removed as
/// an entry and a real folder made in its place; removal never follows a link (systemd's
/// `rm_rf_children` is the model). So nothing outside the cache is read, written or deleted
/// through something planted inside it (G5, hostile neighbours).
///
/// Only the root is opened by path (the one the user chose, links in it included); everything
/// below is reached through descriptors. `path` is for messages and for handing out.
package final class CacheFolder: Sendable {
    package let descriptor: Int32
    package let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// The cache's root folder, made (0755) when `create` and missing; nil when missing and not
    /// made. Refused (exit 5) when another user owns it or others may write it: whoever can write
    /// it could plant entries there, so nothing in it could be trusted.
    package static func root(_ path: String, create: Bool = true) throws(CenariusError) -> CacheFolder? {
        if create { try FileSystem.makeDirectories(path) }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw FileSystem.failure("cannot open the cache", path)
        }
        let folder = CacheFolder(descriptor: fd, path: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.failure("cannot stat the cache", path) }
        if info.st_uid != geteuid() {
            throw .storage("the cache \(path) belongs to user \(info.st_uid), not to this user (\(geteuid())): refusing a folder another user can change; give --cache a folder of your own")
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            throw .storage("the cache \(path) is writable by other users (mode \(mode)): refusing a folder others can plant links in; run chmod go-w \(path)")
        }
        return folder
    }

    /// Any folder, opened by the path its caller chose (links in it followed), for working below it.
    package static func at(_ path: String) -> CacheFolder? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)
        return fd >= 0 ? CacheFolder(descriptor: fd, path: path) : nil
    }

    /// The sub-folder `name`. Missing: made when `create` (else nil). Anything but a folder in its
    /// place (a symlink, a file, a FIFO): removed as an entry, then made when `create` (else nil).
    package func folder(_ name: String, create: Bool = true) throws(CenariusError) -> CacheFolder? {
        let childPath = path + "/" + name
        for _ in 0..<3 {
            let fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if fd >= 0 { return CacheFolder(descriptor: fd, path: childPath) }
            switch errno {
            case ENOENT:
                guard create else { return nil }
            case ELOOP, ENOTDIR:
                remove(name)
                guard create else { return nil }
            default:
                throw FileSystem.failure("cannot open", childPath)
            }
            if mkdirat(descriptor, name, 0o755) != 0 && errno != EEXIST { throw FileSystem.failure("cannot create directory", childPath) }
        }
        throw .storage("cannot open \(childPath): it keeps changing under this process")
    }

    /// The sub-folder `name` when it is one; nil for anything else, which is left as it is (for
    /// readers, who take no lock and leave repairs to the writer).
    package func existingFolder(_ name: String) -> CacheFolder? {
        let fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        return fd >= 0 ? CacheFolder(descriptor: fd, path: path + "/" + name) : nil
    }

    /// The folder at `relative` (`a/b/c`), each level made or repaired as `folder` does.
    package func folders(_ relative: Substring) throws(CenariusError) -> CacheFolder {
        var folder = self
        for segment in relative.split(separator: "/") {
            guard let next = try folder.folder(String(segment)) else { throw .storage("cannot create directory \(folder.path)/\(segment)") }
            folder = next
        }
        return folder
    }

    /// Removes the entry `name`, whatever it is: a link is removed as a link, a folder with all
    /// it holds (never following a link inside it). A missing entry is fine.
    package func remove(_ name: String) {
        if unlinkat(descriptor, name, 0) == 0 || errno == ENOENT { return }
        guard errno == EISDIR || errno == EPERM else { return }
        if let child = try? folder(name, create: false) { child.removeChildren() }
        unlinkat(descriptor, name, AT_REMOVEDIR)
    }

    /// Empties the folder.
    package func removeChildren() {
        for name in entries() { remove(name) }
    }

    /// The names in the folder (`.` and `..` left out).
    package func entries() -> [String] {
        // A descriptor of its own: readdir moves the offset, which a dup would share.
        let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let dir = fdopendir(fd) else {
            if fd >= 0 { close(fd) }
            return []
        }
        defer { closedir(dir) }
        return FileSystem.names(in: dir)
    }

    /// `lstat` of an entry: links are reported as links.
    package func status(_ name: String) -> stat? {
        var info = stat()
        return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    /// Creates `name` for writing, replacing whatever entry was there (a planted link included,
    /// which is removed, never written through). The descriptor, or -1 with `errno` set.
    package func createFile(_ name: String, mode: mode_t = 0o644) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        let fd = openat(descriptor, name, flags, mode)
        guard fd < 0, errno == EEXIST else { return fd }
        remove(name)
        return openat(descriptor, name, flags, mode)
    }

    /// Opens the regular file `name` for reading; nil for anything else (a link, a FIFO: never
    /// opened in a way that could block or lead outside).
    package func openFile(_ name: String) -> Int32? {
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return nil
        }
        return fd
    }

    /// What the regular file `name` holds; nil when there is none (a link or a FIFO in its place
    /// is not one, and is never followed).
    package func readFile(_ name: String, limit: Int) throws(CenariusError) -> [UInt8]? {
        guard let fd = openFile(name) else { return nil }
        defer { close(fd) }
        return try FileSystem.readAll(fd, path: path + "/" + name, limit: limit)
    }

    /// Renames `name` to `target` in `folder`. An entry in the way that rename(2) cannot replace
    /// (a folder planted where a file goes) is removed first.
    package func rename(_ name: String, to folder: CacheFolder, as target: String) throws(CenariusError) {
        if renameat(descriptor, name, folder.descriptor, target) == 0 { return }
        guard errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST else {
            throw FileSystem.failure("cannot rename \(path)/\(name) to", folder.path + "/" + target)
        }
        folder.remove(target)
        guard renameat(descriptor, name, folder.descriptor, target) == 0 else {
            throw FileSystem.failure("cannot rename \(path)/\(name) to", folder.path + "/" + target)
        }
    }

    /// A hard link to the file `name` as `target` in `folder`; `errno` on failure.
    package func link(_ name: String, to folder: CacheFolder, as target: String) -> Bool {
        linkat(descriptor, name, folder.descriptor, target, 0) == 0
    }

    /// Copies the regular file `name` to `target` in `folder` (written aside, then renamed in).
    package func copy(_ name: String, to folder: CacheFolder, as target: String) throws(CenariusError) {
        guard let source = openFile(name) else { throw FileSystem.failure("cannot open", path + "/" + name) }
        defer { close(source) }
        let temporary = target + ".copy-\(getpid())"
        let destination = folder.createFile(temporary)
        guard destination >= 0 else { throw FileSystem.failure("cannot create", folder.path + "/" + temporary) }
        let copied = FileSystem.copyAll(from: source, to: destination)
        let code = errno
        close(destination)
        guard copied else {
            folder.remove(temporary)
            throw FileSystem.failure("cannot copy \(path)/\(name) to", folder.path + "/" + target, code)
        }
        try folder.rename(temporary, to: folder, as: target)
    }

    /// Writes `bytes` to `name.tmp-<pid>`, then renames it over `name`.
    package func write(_ bytes: [UInt8], to name: String, durable: Bool = true) throws(CenariusError) {
        let temporary = "\(name).tmp-\(getpid())"
        let fd = createFile(temporary)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", path + "/" + temporary) }
        var ok = FileSystem.writeAll(fd, bytes)
        let code = errno
        if ok && durable { ok = fsync(fd) == 0 }
        close(fd)
        guard ok else {
            unlinkat(descriptor, temporary, 0)
            throw FileSystem.failure("cannot write", path + "/" + temporary, code)
        }
        do { try rename(temporary, to: self, as: name) } catch {
            unlinkat(descriptor, temporary, 0)
            throw error
        }
    }

    package func sync() throws(CenariusError) {
        if fsync(descriptor) != 0 { throw FileSystem.failure("cannot sync", path) }
    }
}
