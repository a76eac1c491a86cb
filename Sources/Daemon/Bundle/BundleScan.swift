#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// What `serve --bundle-dir` finds in its folders: bundle files (a POSIX tar whose first member is
/// `cenarius-bundle.json`) and bundle folders (holding that manifest), down to three levels (a
/// stick mounted at `/media/USER/LABEL` under a watched `/media`). Links are never followed and
/// nothing but a regular file is opened (a FIFO planted on a stick cannot hang the daemon).
enum BundleScan {
    struct Found: Equatable {
        var path: String
        /// Changes when the bundle does (device, inode, size, modification time): a bundle still being
        /// copied onto the stick changes from one scan to the next, and is taken once it holds still.
        var identity: String
    }

    static let depth = 3

    static func find(in folders: [String]) -> [Found] {
        var found: [Found] = []
        for folder in folders { walk(folder, level: 0, into: &found) }
        return found
    }

    private static func walk(_ folder: String, level: Int, into found: inout [Found]) {
        let manifest = FileSystem.join(folder, BundleManifest.name)
        if level > 0, let identity = identity(manifest) {
            found.append(Found(path: folder, identity: identity))
            return
        }
        guard level < depth else { return }
        for name in FileSystem.listDirectory(folder).sorted() where !name.hasPrefix(".") && name != "cenarius-reports" {
            let path = FileSystem.join(folder, name)
            switch FileSystem.kind(path) {
            case S_IFDIR?: walk(path, level: level + 1, into: &found)
            case S_IFREG?: if isBundleFile(path), let identity = identity(path) { found.append(Found(path: path, identity: identity)) }
            default: continue
            }
        }
    }

    private static func identity(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// Its first header names the manifest: read 512 bytes, never more.
    private static func isBundleFile(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var block = [UInt8](repeating: 0, count: TarHeader.block)
        guard block.withUnsafeMutableBytes({ read(fd, $0.baseAddress, TarHeader.block) }) == TarHeader.block,
              case .file(let name, _)? = try? TarHeader.parse(block[...], at: 0) else { return false }
        return name == BundleManifest.name
    }
}
