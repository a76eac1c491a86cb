#if canImport(Glibc)
import Glibc
#endif
package import RouteSync

extension FolderDestination {
    /// `flock` on `.cenarius-publish.lock` in the folder: the kernel releases it when the holder
    /// exits or is killed, so there is nothing to expire. (Publishers of one folder share its file
    /// system; over NFS, Linux maps `flock` to the server's locks.)
    package func lock(waiting: (String) -> Void) throws(CenariusError) -> any PublishLock {
        try FileSystem.makeDirectories(root)
        let path = FileSystem.join(root, LockHolder.key)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw FileSystem.failure("cannot open the publish lock", path) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = (try? FileSystem.readFile(path, limit: 4096)).flatMap(LockHolder.parse)
            waiting("waiting for \(holder?.description ?? "another publish") to finish with \(root)")
            var result: Int32
            repeat { result = flock(fd, LOCK_EX) } while result != 0 && errno == EINTR
            guard result == 0 else {
                close(fd)
                throw FileSystem.failure("cannot lock", path)
            }
        }
        // Who holds it, for the next one to say; the lock itself is the flock, not these bytes.
        let holder = LockHolder.mine(lease: 0).serialized()
        if ftruncate(fd, 0) == 0 { _ = holder.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return FolderLock(fd: fd)
    }
}

/// A held `flock`: closing the descriptor releases it.
struct FolderLock: PublishLock {
    let fd: Int32
    func renew() throws(CenariusError) {}
    func release() { close(fd) }
}
