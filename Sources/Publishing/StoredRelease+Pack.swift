#if canImport(Glibc)
import Glibc
#endif
import RouteSync

extension StoredRelease {
    /// Writes the files of `wanted` (by hash, every uri of each) that the release's solid pack holds
    /// — its own, or the one it carries, in that pack's table's order — and removes them from
    /// `wanted`; returns the bytes read. A publish to the default channel stores such files in the
    /// pack and at their uris only (FormPublisher.formsAtURI), and the uri may hold a later release's.
    static func unpack(_ wanted: inout [ContentHash: [RouteEntry]], parts: Parts, from destination: some Destination,
                       into folder: String) throws(CenariusError) -> Int64 {
        var order = parts.table.packOrder
        var pack = parts.index.solidPack.flatMap { $0.files == order.count ? $0 : nil }
        var read: Int64 = 0
        if pack == nil, let carried = parts.index.carriedPack {
            let key = ReleaseHead.tablePath(carried.from)
            guard let bytes = try destination.read(key), ReleaseIndex.tableDigest(bytes) == carried.from else {
                throw .integrity("\(destination.description)\(key) is missing or not what its name says: the release cannot be rebuilt from the store")
            }
            read += Int64(bytes.count)
            order = try RouteTable.parse(bytes, source: key).packOrder
            pack = order.count == carried.pack.files ? carried.pack : nil
        }
        guard let pack else { return read }
        let key = ReleaseIndex.packPath(pack.hash)
        guard let bytes = try destination.read(key, limit: Int(pack.size)) else {
            throw .integrity("\(destination.description)\(key) is missing: the release cannot be rebuilt from the store")
        }
        read += Int64(bytes.count)
        try FileSystem.makeDirectories(folder)
        let temporary = FileSystem.join(folder, ".cenarius-pack-\(getpid())")
        try FileSystem.writeAtomically(bytes, to: temporary, durable: false)
        defer { unlink(temporary) }
        var members: [SolidPack.Member] = []
        for entry in order {
            let first = wanted[entry.hash]?.first.map { FileSystem.join(folder, $0.uri.value) }
            if let first { try FileSystem.makeDirectories(FileSystem.parentDirectory(of: first)) }
            members.append(SolidPack.Member(expected: entry.hash, limit: entry.size ?? Int64(SolidPack.maxContent), destination: first))
        }
        for (entry, result) in zip(order, SolidPack.decode(temporary, growing: nil, members: members)) {
            guard let entries = wanted[entry.hash] else { continue }
            guard case .success = result else { throw .integrity("\(destination.description)\(key) does not decode to \(entry.uri): the release cannot be rebuilt from the store") }
            let first = FileSystem.join(folder, entries[0].uri.value)
            for other in entries.dropFirst() {
                let path = FileSystem.join(folder, other.uri.value)
                try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
                try FileSystem.writeAtomically(try FileSystem.readFile(first), to: path, durable: false)
            }
            wanted[entry.hash] = nil
        }
        return read
    }
}
