package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The cache's single-writer lock (G6): `flock` on `<cache>/lock`, holding the owner's pid
/// so that a second writer can say who it is waiting for. Readers never take it.
package final class WriterLock {
    private var fd: Int32 = -1
    package let path: String

    /// Waits up to `timeout` seconds. Exit 5 when the lock stays held.
    package init(path: String, timeout: Double, purpose: String) throws(CenariusError) {
        self.path = path
        let deadline = FileSystem.monotonic() + timeout
        // A holder may remove the lock file (a first sync that failed leaves no cache behind):
        // a lock taken on a file no longer at `path` locks nothing, so take it again.
        repeat {
            if fd >= 0 { close(fd) }
            fd = WriterLock.openLockFile(path)
            guard fd >= 0 else { throw FileSystem.failure("cannot open lock file", path) }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR else {
                    let error = FileSystem.failure("cannot lock", path)
                    close(fd)
                    throw error
                }
                if FileSystem.monotonic() >= deadline {
                    let holder = WriterLock.holder(path)
                    close(fd)
                    throw CenariusError(.storage, "cache is locked\(holder.map { " by pid \($0)" } ?? "") (\(path)); gave up after \(Int(timeout)) s waiting to \(purpose)",
                                        cause: .locked(holder: holder))
                }
                usleep(20_000)
            }
        } while !stillAtPath()
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
    }

    /// Non-blocking: nil when another process holds it.
    package static func tryAcquire(path: String) throws(CenariusError) -> WriterLock? {
        do { return try WriterLock(path: path, timeout: 0, purpose: "start") } catch {
            if case .locked = error.cause { return nil }
            throw error
        }
    }

    /// The pid written by the current holder, if any.
    package static func holder(_ path: String) -> Int32? {
        guard let bytes = try? FileSystem.readFile(path, limit: 64) else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlinesASCII))
    }

    /// The lock file, never reached through a link: the holder truncates it and writes its pid,
    /// which through a planted link would overwrite a file outside the cache (G5). Anything but a
    /// regular file at `path` is removed first. -1 with `errno` set on failure.
    static func openLockFile(_ path: String) -> Int32 {
        for _ in 0..<3 {
            let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
            var info = stat()
            if fd >= 0, fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return fd }
            if fd >= 0 {
                close(fd)
            } else if errno != ELOOP && errno != EISDIR && errno != ENXIO {
                return -1
            }
            FileSystem.removeTree(path)
        }
        return -1
    }

    private func stillAtPath() -> Bool {
        var held = stat(), named = stat()
        guard fstat(fd, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// Removes the lock file while it is held; writers waiting on it take a new one.
    package func removeFile() { unlink(path) }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

extension String {
    enum TrimSet { case whitespacesAndNewlinesASCII }
    func trimmingCharacters(in _: TrimSet) -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\n" || c == "\t" || c == "\r" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\n" || c == "\t" || c == "\r" { s.removeLast() }
        return String(s)
    }
}
