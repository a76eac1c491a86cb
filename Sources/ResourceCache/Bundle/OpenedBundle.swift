#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// A bundle ready to be synced from as a `file://` remote: a bundle folder read in place, or a
/// bundle file read in place too, each member from its byte range in the tar (TarMembers): nothing
/// is copied before the sync has verified it.
struct OpenedBundle {
    /// The path the bundle was given as.
    let path: String
    let manifest: BundleManifest?
    /// What the bundle's store holds (regular files only: a link or a FIFO planted in a bundle
    /// folder is never read), the finder's answer the forms plan keeps to (FormPlan).
    let listing: Set<String>
    /// A bundle file's members; nil for a folder.
    let members: TarMembers?

    /// The remote the sync reads: the folder, or the tar whose members are had by their ranges.
    func remote(routesName: String, channel: String) throws(CenariusError) -> Remote {
        var remote = try Remote("file://" + Remote.escape(path), routesName: routesName, channel: channel)
        remote.isBundle = true
        remote.members = members
        return remote
    }

    /// The bytes of the member `name` (at most `limit`), from the folder or the tar; nil when it
    /// is not there as a regular file or cannot be read.
    func read(_ name: String, limit: Int) -> [UInt8]? {
        guard let members else {
            let file = FileSystem.join(path, name)
            return FileSystem.kind(file) == S_IFREG ? try? FileSystem.readFile(file, limit: limit) : nil
        }
        guard let range = members.ranges[name], range.size <= limit else { return nil }
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var reader = BlockReader(fd: fd, source: path, size: range.offset + range.size)
        guard (try? reader.skip(range.offset)) != nil else { return nil }
        return try? reader.read(Int(range.size))
    }

    /// Why the bundle cannot be read any more (a stick pulled out, or failing), or nil: each
    /// member's last byte is read again, or the folder's manifest and head looked at.
    func unreadable() -> String? {
        guard let members else {
            return FileSystem.kind(path) == S_IFDIR && FileSystem.listDirectory(path).contains(where: BundleLayout.isMember) ? nil : "its folder is gone"
        }
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return FileSystem.errnoText() }
        defer { Glibc.close(fd) }
        var byte: UInt8 = 0
        for range in members.ranges.values where range.size > 0 {
            let n = pread(fd, &byte, 1, off_t(range.offset + range.size - 1))
            if n < 0 { return FileSystem.errnoText() }
            if n == 0 { return "it ends before its members do" }
        }
        return nil
    }

    /// Where the device writes its report: `cenarius-reports/` beside the bundle.
    var reportFolder: String { Self.reportFolder(of: path) }

    static func reportFolder(of path: String) -> String { FileSystem.join(FileSystem.parentDirectory(of: path), BundleReport.folderName) }

    static func open(_ given: String, layout: CacheLayout, maxFileSize: Int64) throws(CenariusError) -> OpenedBundle {
        var path = FileSystem.absolute(given)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        // Not blocking on a FIFO, and not following a link planted where the bundle should be.
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP { throw .integrity("\(path) is a symbolic link: a bundle is a regular file or a folder") }
            throw FileSystem.failure(errno == ENOENT ? "no bundle at" : "cannot open the bundle", path).withCode(errno == ENOENT ? .notFound : .storage)
        }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.failure("cannot stat", path) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            return try folder(path)
        case S_IFREG:
            return try indexed(fd, path: path, size: Int64(info.st_size), layout: layout, maxFileSize: maxFileSize)
        default:
            throw .integrity("\(path) is \(FileSystem.kindName(info.st_mode)): a bundle is a regular file or a folder")
        }
    }

    private static func folder(_ path: String) throws(CenariusError) -> OpenedBundle {
        let listing = Set(list(path))
        var manifest: BundleManifest?
        let manifestPath = FileSystem.join(path, BundleManifest.name)
        if FileSystem.kind(manifestPath) == S_IFREG {
            manifest = try BundleManifest.parse(try FileSystem.readFile(manifestPath, limit: BundleManifest.maxBytes), source: manifestPath)
        } else if FileSystem.listDirectory(path).contains(where: BundleLayout.isHead) == false {
            throw .integrity("\(path) holds no \(BundleManifest.name) and no head: not a cenarius bundle (or one whose writing broke off)")
        }
        if let manifest {
            for member in manifest.members {
                let file = FileSystem.join(path, member.name)
                guard FileSystem.kind(file) == S_IFREG else {
                    throw .integrity("\(path) lacks \(member.name) as a regular file, which its manifest lists: an incomplete or altered bundle")
                }
                guard FileSystem.regularFileSize(file) == member.size else {
                    throw .integrity("\(path): \(member.name) is \(FileSystem.regularFileSize(file) ?? -1) bytes where its manifest says \(member.size)")
                }
            }
        }
        return OpenedBundle(path: path, manifest: manifest, listing: listing, members: nil)
    }

    private static func indexed(_ fd: Int32, path: String, size: Int64, layout: CacheLayout, maxFileSize: Int64) throws(CenariusError) -> OpenedBundle {
        // What an import of an earlier version, unpacking bundle files there, left when killed.
        sweep(layout.imports)
        let (manifest, ranges) = try BundleIndexing.index(fd, source: path, size: size, maxFileSize: maxFileSize)
        return OpenedBundle(path: path, manifest: manifest, listing: Set(ranges.keys.filter(BundleLayout.isStoreObject)), members: TarMembers(file: "file://" + Remote.escape(path), ranges: ranges))
    }

    /// Removes what an import that died left in `import/` (its process is gone).
    private static func sweep(_ root: String) {
        for name in FileSystem.listDirectory(root) {
            guard let pid = name.split(separator: "-").first.flatMap({ Int32($0) }), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            FileSystem.removeTree(FileSystem.join(root, name))
        }
    }

    /// `_cenarius/<folder>/<name>` of every regular file in the bundle's store folders.
    private static func list(_ root: String) -> [String] {
        var keys: [String] = []
        for sub in BundleLayout.storeFolders {
            let relative = ReleaseIndex.folder + "/" + sub
            for name in FileSystem.listDirectory(FileSystem.join(root, relative)) where FileSystem.kind(FileSystem.join(root, relative + "/" + name)) == S_IFREG {
                keys.append(relative + "/" + name)
            }
        }
        return keys
    }
}

extension CenariusError {
    fileprivate func withCode(_ code: Code) -> CenariusError {
        var error = self
        error.code = code
        return error
    }
}
