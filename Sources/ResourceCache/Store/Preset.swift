package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// A read-only folder served as is: the preset (with its own `Routes.json`) or the develop folder.
/// Lookups never leave it: a path whose real location is outside the folder, or that is not
/// a regular file, is treated as absent (G5).
package struct ServedFolder: Sendable {
    package let root: String
    /// `realpath(root)`, computed once; nil when the folder does not exist.
    package let realRoot: String?

    package init(root: String) {
        self.root = root
        realRoot = ServedFolder.realPath(root)
    }

    /// The path of `uri` inside the folder if it is a regular file there, else nil. A symlink
    /// that resolves inside the folder is given as the file it points to: files are hashed and
    /// copied without following links, and whoever opens the path gets the file checked here.
    package func file(_ uri: URIPath) -> String? {
        guard let realRoot else { return nil }
        let path = FileSystem.join(root, uri.value)
        guard FileSystem.kind(path) == S_IFREG else {
            // A symlink as the last component: allowed only when it resolves inside the folder.
            guard FileSystem.kind(path) == S_IFLNK, let real = ServedFolder.realPath(path),
                  real.hasPrefix(realRoot + "/"), FileSystem.kind(real) == S_IFREG else { return nil }
            return real
        }
        // Directory components may be symlinks too; the resolved path must stay inside.
        if uri.value.contains("/"), let real = ServedFolder.realPath(path), !real.hasPrefix(realRoot + "/") {
            return nil
        }
        return path
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// The preset: a served folder plus its route table.
package struct Preset: Sendable {
    package let folder: ServedFolder
    package let routesName: String

    package init(root: String, routesName: String = "Routes.json") {
        folder = ServedFolder(root: root)
        self.routesName = routesName
    }

    package var root: String { folder.root }
    package var tablePath: String { FileSystem.join(root, routesName) }

    /// The preset's own table; an empty table when there is no preset. Capped like a remote's
    /// (`RouteTable.maxBytes`): an invalid table (exit 4) beyond it, refused before it is read.
    package func table() throws(CenariusError) -> RouteTable {
        if let size = FileSystem.regularFileSize(tablePath), size > Int64(RouteTable.maxBytes) {
            throw .integrity("preset table \(tablePath) is \(size) bytes, more than the \(RouteTable.maxBytes) a route table may be")
        }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readFile(tablePath, limit: RouteTable.maxBytes) } catch {
            if error.code == .notFound { return .empty }
            throw error
        }
        return try RouteTable.parse(bytes, source: tablePath)
    }

    /// Where the preset holds a file of a hash, by the first uri `table` lists it under: the
    /// patch bases a device or a seed already has (B8).
    package func copies(listedIn table: RouteTable) -> @Sendable (ContentHash) -> String? {
        var byHash: [ContentHash: URIPath] = [:]
        for entry in table.entries where byHash[entry.hash] == nil { byHash[entry.hash] = entry.uri }
        let uris = byHash, folder = folder
        return { hash in uris[hash].flatMap { folder.file($0) } }
    }

    /// The preset copy of `entry` when the preset lists the same hash for the same uri.
    package func file(for entry: RouteEntry, in table: RouteTable) -> String? {
        guard table[entry.uri]?.hash == entry.hash else { return nil }
        return folder.file(entry.uri)
    }
}
