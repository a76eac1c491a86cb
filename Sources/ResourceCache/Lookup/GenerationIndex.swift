import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// A sorted, line-oriented copy of a generation's table, written at commit, so that a
/// `resolve` process finds one uri by binary search over a memory-mapped file instead of
/// parsing every entry (B4: a 20,000-entry table parses in tens of milliseconds, a search
/// touches a few pages).
///
///     cenarius-index-1 <identity of the preset's table at commit>
///     <uri> TAB <hash> TAB <P: served from the preset | C: held in the cache>
///
/// uris cannot contain tabs or newlines (no control characters), so the format needs no escaping.
/// Lines are sorted by the uri's UTF-8 bytes.
enum GenerationIndex {
    static let magic = "cenarius-index-1"

    enum Hit: Equatable {
        case absent
        case present(ContentHash, fromPreset: Bool, presetIdentity: String)
    }

    static func path(_ generation: Generation) -> String { generation.path + "/index" }

    /// Size, mtime and inode of the preset's table: when they differ from the index's, what it
    /// says about the preset is out of date.
    static func presetIdentity(_ preset: Preset) -> String {
        var info = stat()
        guard stat(preset.tablePath, &info) == 0 else { return "-" }
        return "\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)-\(info.st_ino)"
    }

    static func write(_ table: RouteTable, fromPreset: Set<URIPath>, presetIdentity: String, to path: String) throws(CenariusError) {
        // Positions sorted, not a copy of the entries, and the file written a mebibyte at a time:
        // with a million entries the index is not held in memory twice over beside the table.
        let entries = table.entries
        let order = entries.indices.sorted { entries[$0].uri < entries[$1].uri }
        try FileSystem.writeAtomically(to: path, durable: false) { fd in
            var out: [UInt8] = Array("\(magic) \(presetIdentity)\n".utf8)
            out.reserveCapacity(1 << 20 + 2048)
            for position in order {
                let entry = entries[position]
                out.append(contentsOf: entry.uri.value.utf8)
                out.append(0x09)
                out.append(contentsOf: entry.hash.hex.utf8)
                out.append(contentsOf: fromPreset.contains(entry.uri) ? "\tP\n".utf8 : "\tC\n".utf8)
                if out.count >= 1 << 20 {
                    guard FileSystem.writeAll(fd, out) else { return false }
                    out.removeAll(keepingCapacity: true)
                }
            }
            return FileSystem.writeAll(fd, out)
        }
    }

    /// nil when there is no usable index (older generations): use the table.
    static func lookup(_ uri: URIPath, in generation: Generation) -> Hit? {
        search(uri, at: path(generation))?.hit
    }

    /// The search in any index file (also the preset's, see PresetIndex), with its header's identity.
    static func search(_ uri: URIPath, at indexPath: String) -> (identity: String, hit: Hit)? {
        let fd = open(indexPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return nil }
        let size = Int(info.st_size)
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { return nil }
        defer { munmap(base, size) }
        let bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: size)
        guard let headerEnd = bytes.firstIndex(of: 0x0A),
              let header = String(validating: bytes[0..<headerEnd], as: UTF8.self), header.hasPrefix(magic + " ") else { return nil }
        let identity = String(header.dropFirst(magic.count + 1))
        let key = Array(uri.value.utf8)
        var low = headerEnd + 1
        var high = size
        while low < high {
            var start = (low + high) / 2
            while start > low && bytes[start - 1] != 0x0A { start -= 1 }
            guard let tab = bytes[start..<high].firstIndex(of: 0x09),
                  let end = bytes[tab..<size].firstIndex(of: 0x0A) else { return nil }
            let candidate = UnsafeBufferPointer(rebasing: bytes[start..<tab])
            if candidate.elementsEqual(key) {
                let fields = bytes[(tab + 1)..<end].split(separator: 0x09)
                guard fields.count == 2, let hashText = String(validating: fields[0], as: UTF8.self),
                      let hash = ContentHash(hex: hashText) else { return nil }
                return (identity, .present(hash, fromPreset: fields[1].first == UInt8(ascii: "P"), presetIdentity: identity))
            }
            if candidate.lexicographicallyPrecedes(key) { low = end + 1 } else { high = start }
        }
        return (identity, .absent)
    }
}
