package import RouteSync

/// What a sync has to do to make `table` servable, decided without any I/O (G4):
/// a file is downloaded only if no verified copy of its hash exists in the cache or the preset,
/// and content shared by several uris is fetched once.
package struct SyncPlan: Sendable, Equatable {
    /// Served from the preset as it is: same uri, same hash, file present.
    package var fromPreset: [RouteEntry] = []
    /// Held in this generation's `files/`, linked from the object store.
    package var cached: [RouteEntry] = []
    /// Objects to copy in from the preset (same content under another uri), with the preset uri to copy.
    package var imports: [(hash: ContentHash, source: URIPath)] = []
    /// One entry per hash to download.
    package var downloads: [RouteEntry] = []

    /// Bytes to download when the table declares sizes; `Int64.max` when their sum passes
    /// `ByteCount.limit` (the sizes are the origin's numbers: the free-space check then fails,
    /// nothing traps).
    package var downloadBytes: Int64? {
        var sizes: [ByteCount] = []
        sizes.reserveCapacity(downloads.count)
        for entry in downloads {
            guard let size = entry.size else { return nil }
            guard let count = ByteCount(exactly: size) else { return .max }
            sizes.append(count)
        }
        return ByteCount.sum(sizes)?.value ?? .max
    }

    package static func == (lhs: SyncPlan, rhs: SyncPlan) -> Bool {
        lhs.fromPreset == rhs.fromPreset && lhs.cached == rhs.cached && lhs.downloads == rhs.downloads
            && lhs.imports.map(\.hash) == rhs.imports.map(\.hash) && lhs.imports.map(\.source) == rhs.imports.map(\.source)
    }

    /// - Parameters:
    ///   - presetHas: whether the preset folder really holds a file for the uri.
    ///   - storeHas: whether the object store holds a verified object for the hash.
    package init(table: RouteTable, preset: RouteTable, presetHas: (URIPath) -> Bool, storeHas: (ContentHash) -> Bool) {
        var presetByHash: [ContentHash: URIPath] = [:]
        for entry in preset.entries where presetByHash[entry.hash] == nil && presetHas(entry.uri) {
            presetByHash[entry.hash] = entry.uri
        }
        var planned = Set<ContentHash>()
        for entry in table.entries {
            if preset[entry.uri]?.hash == entry.hash && presetHas(entry.uri) {
                fromPreset.append(entry)
                continue
            }
            cached.append(entry)
            guard !planned.contains(entry.hash) else { continue }
            planned.insert(entry.hash)
            if storeHas(entry.hash) { continue }
            if let source = presetByHash[entry.hash] {
                imports.append((entry.hash, source))
            } else {
                downloads.append(entry)
            }
        }
    }
}
