#if canImport(Glibc)
import Glibc
#endif

extension FormPublisher {
    /// A pack being written: its file, hash and size so far.
    struct PackWriter {
        let temporary: String
        let fd: Int32
        var hasher: StreamingHasher
        var size: Int64 = 0
        var bases: [ContentHash?] = []

        init(folder: String, name: String, algorithm: ContentHash.Algorithm) throws(CenariusError) {
            temporary = folder + "/pack/.building-\(getpid())-\(name)"
            fd = FileSystem.createFile(temporary)
            guard fd >= 0 else { throw FileSystem.failure("cannot create", temporary) }
            hasher = StreamingHasher(algorithm)
        }

        mutating func append(_ frame: [UInt8], base: ContentHash? = nil) throws(CenariusError) {
            size += Int64(frame.count)
            frame.withUnsafeBytes { hasher.update($0) }
            bases.append(base)
            guard FileSystem.writeAll(fd, frame) else { throw FileSystem.failure("cannot write", temporary) }
        }

        /// Moves the pack to its name under `root`; nil (and nothing left behind) when `keep` is false.
        func finish(root: String, keep: Bool) throws(CenariusError) -> ContentHash? {
            close(fd)
            guard keep else {
                unlink(temporary)
                return nil
            }
            let hash = hasher.finalize()
            let path = FileSystem.join(root, ReleaseIndex.packPath(hash))
            guard rename(temporary, path) == 0 else { throw FileSystem.failure("cannot write", path) }
            return hash
        }
    }
}
