#if canImport(Glibc)
import Glibc
#endif

/// Builds a route table from a folder (`cenariusd routes DIR`): every regular file, hashed,
/// sorted by uri. Hidden files, the table itself, its signature, its release manifest, the heads
/// of its channels (ReleaseHead) and the folder of its compressed forms (`_cenarius/`,
/// ReleaseIndex) are left out; symlinks
/// and files whose path is not a valid uri are skipped and reported.
package struct RouteTableBuilder: Sendable {
    package let root: String
    package let routesName: String
    package let algorithm: ContentHash.Algorithm

    package init(root: String, routesName: String = "Routes.json", algorithm: ContentHash.Algorithm = .md5) {
        self.root = root
        self.routesName = routesName
        self.algorithm = algorithm
    }

    package struct Result: Sendable {
        package var table: RouteTable
        package var skipped: [(path: String, reason: String)]
        package var bytes: Int64

        /// A table already built (a folder's exact table, for a release of it written again).
        package init(table: RouteTable, skipped: [(path: String, reason: String)] = [], bytes: Int64) {
            self.table = table
            self.skipped = skipped
            self.bytes = bytes
        }
    }

    package func build() throws(CenariusError) -> Result {
        guard FileSystem.isDirectory(root) else { throw .notFound("no such folder \(root)") }
        var files: [(uri: URIPath, path: String)] = []
        var skipped: [(String, String)] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let directory = relative.isEmpty ? root : FileSystem.join(root, relative)
            for name in FileSystem.listDirectory(directory).sorted() {
                if name.hasPrefix(".") { continue }
                let uri = relative.isEmpty ? name : relative + "/" + name
                if relative.isEmpty && (name == routesName || name == routesName + ".sig" || name == routesName + ".release"
                    || name == ReleaseIndex.folder || isHead(name)) { continue }
                let path = FileSystem.join(root, uri)
                switch FileSystem.kind(path) {
                case S_IFDIR: pending.append(uri)
                case S_IFREG:
                    let valid: URIPath
                    do { valid = try URIPath(validating: uri) } catch {
                        skipped.append((uri, error.message))
                        continue
                    }
                    files.append((valid, path))
                case S_IFLNK: skipped.append((uri, "symbolic link (not followed)"))
                default: skipped.append((uri, "not a regular file"))
                }
            }
        }
        var entries: [RouteEntry] = []
        var bytes: Int64 = 0
        for (file, (hash, size)) in zip(files, try BatchHasher().hashAll(files.map { ($0.path, algorithm) })) {
            entries.append(RouteEntry(uri: file.uri, hash: hash, size: size))
            bytes += size
        }
        entries.sort { $0.uri < $1.uri }
        return Result(table: try RouteTable(entries: entries), skipped: skipped, bytes: bytes)
    }

    /// `Routes.head`, `Routes.beta.head`: a channel's head beside the table.
    private func isHead(_ name: String) -> Bool {
        let defaultHead = ReleaseHead.name(routesName: routesName)
        guard name.hasSuffix(".head") else { return false }
        if name == defaultHead { return true }
        let stem = String(defaultHead.dropLast(".head".count)) + "."
        let channel = name.dropFirst(stem.count).dropLast(".head".count)
        return name.hasPrefix(stem) && ReleaseHead.isChannel(String(channel))
    }
}

/// How two tables differ, uri by uri: what `routes --check` and `seed --check` report.
package struct TableDifference: Sendable, Equatable {
    package var added: [URIPath] = []
    package var removed: [URIPath] = []
    package var changed: [URIPath] = []

    package var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }

    package init(from old: RouteTable, to new: RouteTable) {
        for entry in new.entries {
            if let before = old[entry.uri] {
                if before.hash != entry.hash { changed.append(entry.uri) }
            } else {
                added.append(entry.uri)
            }
        }
        for entry in old.entries where new[entry.uri] == nil { removed.append(entry.uri) }
    }

    package var summary: String {
        func list(_ uris: [URIPath]) -> String {
            uris.prefix(5).map(\.value).joined(separator: ", ") + (uris.count > 5 ? ", …" : "")
        }
        var parts: [String] = []
        if !changed.isEmpty { parts.append("\(changed.count) changed (\(list(changed)))") }
        if !added.isEmpty { parts.append("\(added.count) added (\(list(added)))") }
        if !removed.isEmpty { parts.append("\(removed.count) removed (\(list(removed)))") }
        return parts.isEmpty ? "identical" : parts.joined(separator: ", ")
    }

}
