#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// The bundles `serve --bundle-dir` took, kept in the cache (`bundles-taken`: one manifest SHA-256 a
/// line, replaced whole by an atomic rename, so a crash leaves the old list or the new one) so that a
/// restarted daemon with the same stick still in neither imports nor reports it again. A bundle is
/// known by its manifest, not by its file's inode: a stick mounted again has new inodes, the same bundle.
struct BundleTaken {
    let path: String
    private(set) var digests: [String]

    init(path: String) {
        self.path = path
        let bytes = (try? FileSystem.readFile(path, limit: 1 << 20)) ?? []
        digests = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }.filter { $0.utf8.count == 64 }
    }

    func contains(_ digest: String) -> Bool { digests.contains(digest) }

    /// Remembers `digest`; past BundleWatch.remembered the oldest are forgotten. A write that fails
    /// (a full cache) costs at most one more import after a restart: `unchanged`.
    mutating func add(_ digest: String) {
        digests.append(digest)
        if digests.count > BundleWatch.remembered { digests.removeFirst(digests.count - BundleWatch.remembered) }
        var text: [UInt8] = []
        for digest in digests { text += Array(digest.utf8); text.append(UInt8(ascii: "\n")) }
        try? FileSystem.writeAtomically(text, to: path)
    }

    /// The SHA-256 of the bundle's manifest: a folder's `cenarius-bundle.json`, a file's first member
    /// (read by offset: never more than the manifest). Nil when it cannot be read as one.
    static func digest(of bundle: String) -> String? {
        if FileSystem.kind(bundle) == S_IFDIR {
            return (try? FileSystem.readFile(FileSystem.join(bundle, BundleManifest.name), limit: 1 << 24)).map(StreamingHasher.sha256Hex)
        }
        let fd = open(bundle, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var block = [UInt8](repeating: 0, count: TarHeader.block)
        guard block.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, TarHeader.block, 0) }) == TarHeader.block,
              case .file(_, let size)? = try? TarHeader.parse(block[...], at: 0), size >= 0, size <= 1 << 24 else { return nil }
        var manifest = [UInt8](repeating: 0, count: Int(size))
        guard manifest.isEmpty || manifest.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, Int(size), off_t(TarHeader.block)) }) == Int(size) else { return nil }
        return StreamingHasher.sha256Hex(manifest)
    }
}
