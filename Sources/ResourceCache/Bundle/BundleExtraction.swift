#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// A bundle file (a POSIX tar, docs/bundles.md) unpacked into a private folder of the cache's own
/// file system, where the sync then reads it as any `file://` remote. Streamed: one block of
/// headers, then each member's data straight to its file. Every name must be one of the bundle's
/// layout (BundleLayout) and every entry a regular file; a header that does not add up, a member
/// cut short or a missing end is refused whole (exit 4), and nothing is written outside the folder.
enum BundleExtraction {
    /// Unpacks the tar read from `fd` into `folder` (made empty by the caller); returns the manifest.
    static func unpack(_ fd: Int32, source: String, into folder: String, maxFileSize: Int64) throws(CenariusError) -> BundleManifest {
        var reader = BlockReader(fd: fd, source: source)
        var manifest: BundleManifest?
        var written: [String: Int64] = [:]
        var pendingPath: String?, pendingSize: Int64?
        while true {
            let offset = reader.offset
            let entry = try TarHeader.parse(try reader.read(TarHeader.block)[...], at: offset)
            switch entry {
            case .end:
                // Two blocks of zeros end an archive: a bundle cut at a member's end still lacks them.
                let second = try reader.read(TarHeader.block)
                guard second.allSatisfy({ $0 == 0 }) else { throw .integrity("\(source): damaged at byte \(offset + 512): data after the archive's end mark") }
                guard let manifest else { throw .integrity("\(source) holds no \(BundleManifest.name): not a cenarius bundle") }
                try check(written, against: manifest, source: source)
                return manifest
            case .pax(let size, let global):
                guard size <= 64 << 10 else { throw .integrity("\(source): a pax header at byte \(offset) is \(size) bytes") }
                let data = try reader.read(Int(size))
                try reader.skip(TarHeader.padding(size).count)
                if !global { (pendingPath, pendingSize) = try TarHeader.paxValues(data, at: offset) }
            case .folder(let name):
                let trimmed = name.hasSuffix("/") ? String(name.dropLast()) : name
                guard trimmed == ReleaseIndex.folder || BundleLayout.storeFolders.contains(where: { trimmed == ReleaseIndex.folder + "/" + $0 }) else {
                    throw .integrity("\(source): \(name) at byte \(offset) is not a folder of a cenarius bundle")
                }
                (pendingPath, pendingSize) = (nil, nil)
            case .file(let header, let headerSize):
                let name = pendingPath ?? header
                let size = pendingSize ?? headerSize
                (pendingPath, pendingSize) = (nil, nil)
                guard BundleLayout.isMember(name) else { throw .integrity("\(source): \(name) at byte \(offset) is not a member of a cenarius bundle") }
                guard written[name] == nil else { throw .integrity("\(source): \(name) appears twice") }
                guard size <= maxFileSize else { throw .integrity("\(source): \(name) is \(size) bytes, past --max-file-size \(maxFileSize)") }
                if manifest == nil {
                    guard name == BundleManifest.name, size <= BundleManifest.maxBytes else {
                        throw .integrity("\(source): its first member is \(name), not \(BundleManifest.name): not a cenarius bundle")
                    }
                    let bytes = try reader.read(Int(size))
                    manifest = try BundleManifest.parse(bytes, source: source + ": " + BundleManifest.name)
                    try write(bytes, to: FileSystem.join(folder, name))
                } else {
                    try copy(&reader, size: size, to: FileSystem.join(folder, name), name: name)
                }
                try reader.skip(TarHeader.padding(size).count)
                written[name] = size
            }
        }
    }

    /// Every member the manifest lists is there at its size, and nothing else.
    static func check(_ found: [String: Int64], against manifest: BundleManifest, source: String) throws(CenariusError) {
        for member in manifest.members {
            guard let size = found[member.name] else { throw .integrity("\(source) lacks \(member.name), which its manifest lists: an incomplete bundle") }
            guard size == member.size else { throw .integrity("\(source): \(member.name) is \(size) bytes where its manifest says \(member.size)") }
        }
        let listed = Set(manifest.members.map(\.name) + [BundleManifest.name])
        if let extra = found.keys.sorted().first(where: { !listed.contains($0) }) { throw .integrity("\(source) holds \(extra), which its manifest does not list") }
    }

    private static func create(_ path: String) throws(CenariusError) -> Int32 {
        try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", path) }
        return fd
    }

    private static func write(_ bytes: [UInt8], to path: String) throws(CenariusError) {
        let fd = try create(path)
        defer { close(fd) }
        guard FileSystem.writeAll(fd, bytes) else { throw FileSystem.failure("cannot write", path) }
    }

    private static func copy(_ reader: inout BlockReader, size: Int64, to path: String, name: String) throws(CenariusError) {
        let fd = try create(path)
        defer { close(fd) }
        var left = size
        while left > 0 {
            let chunk = try reader.read(Int(min(left, 1 << 20)))
            guard FileSystem.writeAll(fd, chunk) else { throw FileSystem.failure("cannot write", path) }
            left -= Int64(chunk.count)
        }
    }
}

/// Reads exactly what is asked from a descriptor, or says where the file ended.
struct BlockReader {
    let fd: Int32
    let source: String
    private(set) var offset: Int64 = 0

    init(fd: Int32, source: String) {
        self.fd = fd
        self.source = source
    }

    mutating func read(_ count: Int) throws(CenariusError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, count - filled) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw FileSystem.failure("cannot read", source) }
            guard n > 0 else { throw .integrity("\(source) is truncated: it ends at byte \(offset + Int64(filled)), inside a member or before the archive's end") }
            filled += n
        }
        offset += Int64(count)
        return out
    }

    mutating func skip(_ count: Int) throws(CenariusError) {
        if count > 0 { _ = try read(count) }
    }
}
