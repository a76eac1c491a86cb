import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The preset's table indexed the way a generation's is (GenerationIndex), so that `resolve` on
/// a device that has not synced yet, the state of every fresh install, finds a uri by binary
/// search instead of parsing the whole preset table (F: ≤ 5 ms with a 20,000-entry preset; the
/// parse alone took 20 ms). Written into the cache by the first lookup that had to parse.
///
/// The header names the preset table's path and identity (size, mtime, ctime, inode, device):
/// an index of another table, or of this one before it changed, is never used. The identity is
/// taken before the table is read, so a table replaced while it was being indexed leaves an
/// index whose identity no longer matches.
enum PresetIndex {
    /// nil when the preset has no table (nothing to index) or a path the header cannot hold.
    static func identity(_ preset: Preset) -> String? {
        let path = preset.tablePath
        var info = stat()
        guard !path.utf8.contains(0x0A), stat(path, &info) == 0 else { return nil }
        return "\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)-\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
            + "-\(info.st_ino)-\(info.st_dev) \(path)"
    }

    /// nil when the cache holds no index for this identity: parse the table.
    static func lookup(_ uri: URIPath, identity: String, layout: CacheLayout) -> GenerationIndex.Hit? {
        guard let found = GenerationIndex.search(uri, at: layout.presetIndex), found.identity == identity else { return nil }
        return found.hit
    }

    /// Best effort: a cache folder this process cannot write only costs the next lookup a parse.
    static func write(_ table: RouteTable, identity: String, layout: CacheLayout) {
        guard table.count > 0 else { return }
        try? FileSystem.makeDirectories(layout.root)
        try? GenerationIndex.write(table, fromPreset: Set(table.entries.map(\.uri)), presetIdentity: identity,
                                   to: layout.presetIndex)
    }
}
