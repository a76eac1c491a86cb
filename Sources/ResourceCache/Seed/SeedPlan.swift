import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// What a seed downloads, and where each download goes, from the remote table and the preset's
/// old one. Built between the table's arrival and the first file request, so it stays a plain
/// pass over the entries, with no closures over its own state.
struct SeedPlan {
    /// One entry per content to download: the first uri that lists it.
    private(set) var fetch: [RouteEntry] = []
    /// The other uris whose content an entry of `fetch` brings (rare), by hash.
    private(set) var sharing: [ContentHash: [RouteEntry]] = [:]
    /// One per entry of `fetch`.
    private(set) var files: [FileDownload] = []
    /// Per file: it waits in the staging folder, because the path it replaces holds a file that
    /// goes only once every download is verified; otherwise it is downloaded straight into place.
    private(set) var staged: [Bool] = []
    /// Files the old table vouches for with the same hash: kept without being read.
    private(set) var kept = 0
    private(set) var fresh: FreshPaths

    init(table: RouteTable, old: RouteTable, preset: Preset, remote: Remote, mirrors: [Remote] = [], staging: String) {
        fresh = FreshPaths(root: preset.root)
        // One download per content: the first uri with a hash is fetched, and the others that
        // share it (rare) get copies. A file the old table vouches for with the same hash is
        // kept without re-reading it.
        var seen = Set<ContentHash>(minimumCapacity: table.count)
        fetch.reserveCapacity(table.count)
        for entry in table.entries {
            if old[entry.uri]?.hash == entry.hash, preset.folder.file(entry.uri) != nil {
                kept += 1
            } else if seen.insert(entry.hash).inserted {
                fetch.append(entry)
            } else {
                sharing[entry.hash, default: []].append(entry)
            }
        }
        files.reserveCapacity(fetch.count)
        staged.reserveCapacity(fetch.count)
        for first in fetch {
            // A path that is new (no file, nothing in the old table) is downloaded straight into
            // place: until the table is written nothing vouches for it, so an interrupted seed lies
            // about nothing, and there is no rename per file afterwards.
            var place = inPlace(first, old: old)
            for other in sharing[first.hash] ?? [] where place == nil {
                place = inPlace(other, old: old)
            }
            staged.append(place == nil)
            files.append(FileDownload(url: remote.fileURL(first.uri), destination: place?.path ?? staging + "/" + first.hash.hex,
                                      expected: first.hash, label: (place?.entry ?? first).uri.value, size: first.size,
                                      mirrors: mirrors.map { $0.fileURL(first.uri) }))
        }
    }

    /// `first` and the uris that share its content.
    func entries(_ first: RouteEntry) -> [RouteEntry] { [first] + (sharing[first.hash] ?? []) }

    private mutating func inPlace(_ entry: RouteEntry, old: RouteTable) -> (entry: RouteEntry, path: String)? {
        let path = FileSystem.join(fresh.root, entry.uri.value)
        guard old[entry.uri] == nil, fresh.isNew(path) else { return nil }
        return (entry, path)
    }
}

/// Paths a seed may create in place, and how to take them away again when it fails: the
/// files it downloaded and the folders that did not exist before it (created by the downloads).
struct FreshPaths {
    let root: String
    /// An empty folder at the start: everything in it is the seed's own, no need to look.
    private let rootWasEmpty: Bool
    /// Folders looked at: whether files can be created in them (false: a file stands in the way).
    private var usable: [String: Bool] = [:]
    /// Folders that did not exist, outermost first.
    private var absent: [String] = []

    init(root: String) {
        self.root = root
        rootWasEmpty = FileSystem.listDirectory(root).isEmpty
    }

    /// Whether nothing is at `path` and it can be created now: no file stands where one of its
    /// folders should be (that file goes only once every download is verified). Remembers which
    /// of its folders are missing.
    mutating func isNew(_ path: String) -> Bool {
        if rootWasEmpty { return true }
        var missing: [String] = []
        var folder = FileSystem.parentDirectory(of: path)
        var creatable = true
        while folder != root {
            if let known = usable[folder] {
                creatable = known
                break
            }
            guard let kind = FileSystem.kind(folder) else {
                missing.append(folder)
                folder = FileSystem.parentDirectory(of: folder)
                continue
            }
            creatable = kind == S_IFDIR
            usable[folder] = creatable
            break
        }
        for folder in missing { usable[folder] = creatable }
        guard creatable else { return false }
        absent += missing.reversed()
        return FileSystem.kind(path) == nil
    }

    func undo(files: [String]) {
        if rootWasEmpty {
            for name in FileSystem.listDirectory(root) { FileSystem.removeTree(FileSystem.join(root, name)) }
            return
        }
        for file in files { unlink(file) }
        for folder in absent.reversed() { rmdir(folder) }
    }
}
