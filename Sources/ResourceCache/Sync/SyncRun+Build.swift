#if canImport(Glibc)
import Glibc
#endif
import RouteSync

extension SyncRun {
    /// Assembles `generations/<n>.building`: the exact table bytes, meta, and a hard link per
    /// cached uri (a copy when the object has all the links its file system allows). Every
    /// folder is made and every link placed relative to an opened folder (G5).
    func build(number: Int, table: RouteTable, tableBytes: [UInt8], plan: SyncPlan, meta: GenerationMeta) throws(CenariusError) -> String {
        let name = "\(number).building"
        cache.generations.remove(name)
        guard let building = try cache.generations.folder(name), let files = try building.folder("files") else {
            throw .storage("cannot create directory \(layout.building(number))")
        }
        var meta = meta
        var bytes: Int64 = 0
        var shards: [Substring: CacheFolder] = [:]
        // Tables list a folder's files together: the last folder is kept open, not every one.
        var lastFolder: (relative: Substring, folder: CacheFolder) = ("", files)
        for entry in plan.cached {
            let uri = entry.uri.value
            let slash = uri.utf8.lastIndex(of: UInt8(ascii: "/"))
            let relative = slash.map { uri[..<$0] } ?? ""
            let leaf = slash.map { String(uri[uri.index(after: $0)...]) } ?? uri
            if relative != lastFolder.relative { lastFolder = (relative, try files.folders(relative)) }
            let hex = entry.hash.hex
            let shardName = hex.prefix(2)
            if shards[shardName] == nil { shards[shardName] = try cache.shard(of: entry.hash, create: false) }
            guard let shard = shards[shardName], let info = shard.status(hex), info.st_mode & S_IFMT == S_IFREG else {
                throw .storage("corrupt cache: object \(layout.object(entry.hash)) for \(entry.uri) is missing")
            }
            try place(hex, from: shard, as: leaf, in: lastFolder.folder, uri: entry.uri)
            bytes += Int64(info.st_size)
        }
        meta.cachedBytes = bytes
        let path = layout.building(number)
        try GenerationIndex.write(table, fromPreset: Set(plan.fromPreset.map(\.uri)),
                                  presetIdentity: GenerationIndex.presetIdentity(settings.preset), to: path + "/index")
        try building.write(tableBytes, to: "Routes.json", durable: false)
        try building.write(meta.encoded(), to: "meta.json", durable: false)
        return path
    }

    /// A hard link to the object, or a copy of it when the object already has as many links as
    /// its file system allows (EMLINK: ext4 stops at 65,000, reached by identical content in
    /// many uris across kept generations).
    private func place(_ hex: String, from shard: CacheFolder, as leaf: String, in folder: CacheFolder, uri: URIPath) throws(CenariusError) {
        if shard.link(hex, to: folder, as: leaf) { return }
        guard errno == EMLINK else { throw FileSystem.failure("cannot link \(uri) into", folder.path) }
        try shard.copy(hex, to: folder, as: leaf)
    }
}
