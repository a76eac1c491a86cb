import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// A `file://` remote's file, looked at before libcurl opens it. libcurl opens it with a plain
/// open(2), which waits for ever for a writer when the path is a FIFO, and no `--timeout` can
/// end that. Here it is opened with O_NONBLOCK (which returns at once for a FIFO) and anything
/// but a regular file is refused: exit 3, naming the file (G5: nothing blocks past --timeout).
enum LocalFile {
    /// nil: not a `file://` URL, a regular file, or missing (libcurl reports that one as before).
    static func refusal(_ url: String, label: String) -> CenariusError? {
        guard url.utf8.count > 7, url.prefix(7).lowercased() == "file://" else { return nil }
        let path = localPath(url)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return FileSystem.failure("cannot stat", path).recoded(.remote) }
        guard info.st_mode & S_IFMT != S_IFREG else { return nil }
        let what = label == url ? url : "\(label) (\(url))"
        return .remote("\(what): \(path) is \(FileSystem.kindName(info.st_mode)), not a regular file; a file:// remote serves regular files only")
    }

    /// The path of `file://[host]/path`, percent-decoded, without a query or fragment.
    static func localPath(_ url: String) -> String {
        var rest = Substring(url.dropFirst(7))
        if !rest.hasPrefix("/"), let slash = rest.firstIndex(of: "/") { rest = rest[slash...] }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        // URIPath's decoder: `%` and two hex digits, else the path as written (never `%+1` as 0x01).
        let bytes = URIPath.percentDecoded(Array(rest.utf8)) ?? Array(rest.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension CenariusError {
    /// The same message under another code.
    func recoded(_ code: Code) -> CenariusError { CenariusError(code, message, cause: cause) }
}
