#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// A bundle file (a POSIX tar, docs/bundles.md) indexed where it lies: its headers read once, each
/// member's byte range kept (TarMembers) and its data stepped over, so that the sync reads the
/// members in place as any `file://` remote's files, and nothing is written before they are
/// verified. Every name must be one of the bundle's layout (BundleLayout) and every entry a
/// regular file; a header that does not add up, a member cut short or a missing end is refused
/// whole (exit 4).
enum BundleIndexing {
    /// The manifest, and where every other member lies, of the tar of `size` bytes read from `fd`.
    static func index(_ fd: Int32, source: String, size: Int64, maxFileSize: Int64) throws(CenariusError) -> (BundleManifest, [String: TarMembers.Range]) {
        var reader = BlockReader(fd: fd, source: source, size: size)
        var manifest: BundleManifest?
        var ranges: [String: TarMembers.Range] = [:]
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
                try check(ranges.mapValues(\.size), against: manifest, source: source)
                return (manifest, ranges)
            case .pax(let size, let global):
                guard size <= 64 << 10 else { throw .integrity("\(source): a pax header at byte \(offset) is \(size) bytes") }
                let data = try reader.read(Int(size))
                try reader.skip(Int64(TarHeader.padding(size).count))
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
                guard ranges[name] == nil, !(name == BundleManifest.name && manifest != nil) else { throw .integrity("\(source): \(name) appears twice") }
                guard size <= maxFileSize else { throw .integrity("\(source): \(name) is \(size) bytes, past --max-file-size \(maxFileSize)") }
                if manifest == nil {
                    guard name == BundleManifest.name, size <= BundleManifest.maxBytes else {
                        throw .integrity("\(source): its first member is \(name), not \(BundleManifest.name): not a cenarius bundle")
                    }
                    manifest = try BundleManifest.parse(try reader.read(Int(size)), source: source + ": " + BundleManifest.name)
                } else {
                    ranges[name] = TarMembers.Range(offset: reader.offset, size: size)
                    try reader.skip(size)
                }
                try reader.skip(Int64(TarHeader.padding(size).count))
            }
        }
    }

    /// Every member the manifest lists is there at its size, and nothing else.
    static func check(_ found: [String: Int64], against manifest: BundleManifest, source: String) throws(CenariusError) {
        for member in manifest.members {
            guard let size = found[member.name] else { throw .integrity("\(source) lacks \(member.name), which its manifest lists: an incomplete bundle") }
            guard size == member.size else { throw .integrity("\(source): \(member.name) is \(size) bytes where its manifest says \(member.size)") }
        }
        let listed = Set(manifest.members.map(\.name))
        if let extra = found.keys.sorted().first(where: { !listed.contains($0) }) { throw .integrity("\(source) holds \(extra), which its manifest does not list") }
    }
}

/// Reads exactly what is asked from a file of a known size, or says where the file ends.
struct BlockReader {
    let fd: Int32
    let source: String
    let size: Int64
    private(set) var offset: Int64 = 0

    init(fd: Int32, source: String, size: Int64) {
        self.fd = fd
        self.source = source
        self.size = size
    }

    private var truncated: CenariusError {
        .integrity("\(source) is truncated: it ends at byte \(size), inside a member or before the archive's end")
    }

    mutating func read(_ count: Int) throws(CenariusError) -> [UInt8] {
        guard offset + Int64(count) <= size else { throw truncated }
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw FileSystem.failure("cannot read", source) }
            guard n > 0 else { throw truncated }
            filled += n
        }
        offset += Int64(count)
        return out
    }

    /// Steps over `count` bytes (a member's data, padding), which must be in the file.
    mutating func skip(_ count: Int64) throws(CenariusError) {
        guard offset + count <= size else { throw truncated }
        offset += count
    }
}
