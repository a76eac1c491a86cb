#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin POSIX helpers. Hot paths (resolve, sync) stay on plain syscalls: no Foundation
/// start-up cost in a process that must answer in a few milliseconds (B4).
package enum FileSystem {
    package static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// A storage error for a failed syscall, naming the file and the cause.
    package static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> CenariusError {
        .storage("\(what) \(path): \(errnoText(code))")
    }

    /// Regular files only: O_NONBLOCK makes a FIFO's open return at once, and it is refused
    /// rather than read (a read of one would wait for a writer for ever).
    package static func readFile(_ path: String, limit: Int = 1 << 30) throws(CenariusError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            throw errno == ENOENT ? .notFound("no such file \(path)") : failure("cannot open", path)
        }
        defer { close(fd) }
        return try readAll(fd, path: path, limit: limit)
    }

    /// What a file holds, read from its descriptor; anything but a regular file is refused.
    package static func readAll(_ fd: Int32, path: String, limit: Int = 1 << 30) throws(CenariusError) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot stat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .storage("\(path) is \(kindName(info.st_mode)), not a regular file") }
        if Int(info.st_size) > limit { throw .storage("\(path) is larger than \(limit) bytes") }
        var out = [UInt8](repeating: 0, count: max(Int(info.st_size), 0))
        var filled = 0
        while true {
            if filled == out.count { out.append(contentsOf: repeatElement(0, count: 4096)) }
            let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", path)
            }
            if n == 0 { break }
            filled += n
            if filled > limit { throw .storage("\(path) is larger than \(limit) bytes") }
        }
        out.removeSubrange(filled...)
        return out
    }

    /// Writes to `path.tmp-<pid>`, optionally fsyncs, renames over `path`: readers see the old or the new file.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, durable: Bool = true) throws(CenariusError) {
        try writeAtomically(to: path, durable: durable) { writeAll($0, bytes) }
    }

    /// The same, with the content written by `produce` to the descriptor it is given (false: it
    /// failed, with `errno` set), so that a large file need not be held in memory whole.
    package static func writeAtomically(to path: String, durable: Bool = true, _ produce: (Int32) -> Bool) throws(CenariusError) {
        let temporary = "\(path).tmp-\(getpid())"
        // O_EXCL | O_NOFOLLOW: a link planted at the temporary name is removed, never written through.
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 && errno == EEXIST {
            removeTree(temporary)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw failure("cannot create", temporary) }
        var ok = produce(fd)
        let code = errno
        if ok && durable { ok = fsync(fd) == 0 }
        close(fd)
        guard ok else {
            unlink(temporary)
            throw failure("cannot write", temporary, code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw failure("cannot rename into", path, code)
        }
    }

    /// Creates (or truncates) a file for writing, making its missing parent folders on the way,
    /// so that downloads into a fresh tree create each folder when its first file arrives.
    /// The descriptor, or -1 with `errno` set.
    /// A link at `path` itself is not followed (open fails with ELOOP): downloads never write through one.
    package static func createFile(_ path: String) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC
        let fd = open(path, flags, 0o644)
        guard fd < 0, errno == ENOENT else { return fd }
        do { try makeDirectories(parentDirectory(of: path)) } catch { return -1 }
        return open(path, flags, 0o644)
    }

    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// All of `buffer`, at the file position, or with `offset` at that offset (pwrite) whatever the position.
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64? = nil) -> Bool {
        var done = 0
        while done < buffer.count {
            let from = buffer.baseAddress! + done, count = buffer.count - done
            let n = offset.map { pwrite(fd, from, count, off_t($0 + Int64(done))) } ?? write(fd, from, count)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += n
        }
        return true
    }

    /// Copies everything readable from `source` to `destination`.
    package static func copyAll(from source: Int32, to destination: Int32) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(source, buffer.baseAddress, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 { return true }
            guard writeAll(destination, UnsafeRawBufferPointer(rebasing: buffer[0..<n])) else { return false }
        }
    }

    /// `mkdir -p`. Existing directories are fine; anything else in the way is an error.
    package static func makeDirectories(_ path: String, mode: UInt32 = 0o755) throws(CenariusError) {
        if mkdir(path, mode) == 0 { return }
        switch errno {
        case EEXIST:
            guard isDirectory(path) else { throw .storage("\(path) exists and is not a directory") }
        case ENOENT:
            let parent = parentDirectory(of: path)
            guard parent != path, !parent.isEmpty else { throw failure("cannot create directory", path, ENOENT) }
            try makeDirectories(parent, mode: mode)
            if mkdir(path, mode) != 0 && errno != EEXIST { throw failure("cannot create directory", path) }
        default:
            throw failure("cannot create directory", path)
        }
    }

    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == path.utf8.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `path` made absolute against the working directory, with `.` segments dropped (no symlinks resolved).
    package static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            full = String(cString: cwd) + "/" + path
            free(cwd)
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    package static func join(_ base: String, _ relative: String) -> String {
        base.hasSuffix("/") ? base + relative : base + "/" + relative
    }

    /// "a FIFO", "a directory"...: for messages about something found where a file belongs.
    package static func kindName(_ mode: UInt32) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symlink"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "a regular file"
        }
    }

    /// lstat: links are reported as links, never followed.
    package static func kind(_ path: String) -> UInt32? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    package static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 && !isDirectory(path) }

    /// Size of a regular file reached without following a symlink at the last step; nil otherwise.
    package static func regularFileSize(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    package static func modificationTime(_ path: String) -> Double? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// Moves a rewritten file's modification time a second past `before` (its predecessor's) when
    /// the rewrite landed in the same second. nginx's ETag is the mtime in seconds and the size,
    /// and Last-Modified the mtime: a head rewritten within the second at the same size (a rollback
    /// right after a publish, two `routes` runs in a row) would look unchanged to every conditional poll.
    package static func advanceModificationTime(_ path: String, past before: Double) {
        guard let now = modificationTime(path), now.rounded(.down) <= before.rounded(.down) else { return }
        // UTIME_OMIT ((1 << 30) - 2): the access time stays.
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), timespec(tv_sec: Int(before.rounded(.down)) + 1, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Sets a stamp file's modification time to now, creating it empty if missing. Stamps carry
    /// their time in mtime alone, so a timer that finds nothing new changes one inode field
    /// rather than writing and renaming a file (B2).
    package static func touch(_ path: String) {
        if utimensat(AT_FDCWD, path, nil, 0) == 0 { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if fd >= 0 { close(fd) }
    }

    package static func listDirectory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        return names(in: dir)
    }

    /// The names an open directory stream holds (`.` and `..` left out).
    package static func names(in dir: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// `rm -rf` without following symlinks: below `path`'s parent, every entry is reached through
    /// a folder descriptor (see `CacheFolder`), so a link is removed as a link wherever it sits.
    package static func removeTree(_ path: String) {
        let parent = parentDirectory(of: path)
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else {
            CacheFolder.at(".")?.remove(path)
            return
        }
        let name = String(path[path.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != ".." else { return }
        CacheFolder.at(parent)?.remove(name)
    }

    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    package static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Hashes a file by streaming it (used for preset copies, `routes` and `verify`, never on lookups).
    package static func hashFile(_ path: String, algorithm: ContentHash.Algorithm, copyTo destinationFD: Int32? = nil) throws(CenariusError) -> (ContentHash, Int64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw failure("cannot open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot stat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .storage("\(path) is \(kindName(info.st_mode)), not a regular file") }
        var hasher = StreamingHasher(algorithm)
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", path)
            }
            if n == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            hasher.update(chunk)
            if let destinationFD, !writeAll(destinationFD, chunk) { throw failure("cannot write copy of", path) }
            total += Int64(n)
        }
        return (hasher.finalize(), total)
    }
}
