import CPlatform
import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// Answers `GET|HEAD /<uri>` once the lookup has picked a file: ETag = the route hash (the gzip
/// variant has its own, weak one), preconditions in RFC 9110's order (`Preconditions`), Range →
/// 206, Content-Type by extension, gzip when accepted (compressed once per object and kept in the
/// cache), `Cache-Control: no-cache` (or immutable for `--immutable` globs), `Last-Modified` (when
/// the content arrived: its object's mtime), `X-Content-Type-Options: nosniff`.
///
/// A file's replies are prepared once (`PreparedFile`) and kept per generation, so that the
/// next request for the same uri is answered on the event loop without touching the disk.
struct FileServer: Sendable {
    let memory: ContentCache
    /// `<cache>/gzip`: compressed copies by hash, written atomically, shared by restarts.
    let gzipFolder: String?
    let prepared: PreparedFiles
    /// `--immutable` globs (fnmatch, `*` crosses `/`): hashed asset names, cached for a year.
    var immutable: [String] = []
    /// `--fallback`: the uri that answers unknown paths naming no file (a single-page app's index).
    var fallback: String?
    /// `X-Cenarius-Source` and the stale mark, which `cenariusd origin` (a remote, not a device) leaves out.
    var describesSource = true

    static let minimumGzipSize = 256

    /// Every reply a file can get without a Range, built from one stat and (for small files)
    /// one read.
    /// `generation`: the generation the file is served from (0: the preset before any sync; nil in
    /// develop mode), sent as `X-Cenarius-Generation` and in `Server-Timing`, where a page's script
    /// can read the generation its own document came from (`performance.getEntriesByType`).
    func prepare(_ resolution: Resolution, generation: Int?) throws(CenariusError) -> PreparedFile {
        var info = stat()
        guard lstat(resolution.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw .notFound("\(resolution.uri) vanished")
        }
        let size = Int(info.st_size)
        let modified = Int(info.st_mtim.tv_sec)
        let etag = resolution.hash.map { "\"\($0)\"" } ?? "W/\"\(size)-\(modified)\""
        let type = MediaTypes.type(for: resolution.uri)
        let compressible = MediaTypes.compresses(type)
        let caching = isImmutable(resolution.uri) ? "max-age=31536000, immutable" : "no-cache"
        var common = [("Cache-Control", caching), ("Accept-Ranges", "bytes"), ("Content-Type", type),
                      ("Last-Modified", HTTPDateLine.format(modified)), ("X-Content-Type-Options", "nosniff")]
        if compressible { common.append(("Vary", "Accept-Encoding")) }
        if describesSource {
            common.append(("X-Cenarius-Source", resolution.source.rawValue))
            if resolution.stale { common.append(("X-Cenarius-Stale", "1")) }
        }
        if let generation {
            common.append(("X-Cenarius-Generation", String(generation)))
            common.append(("Server-Timing", "cenarius-generation;desc=\"\(generation)\""))
        }
        let headers = [("ETag", etag)] + common

        let whole = try small(resolution, size: size)
        let body: Reply.Body = whole.map { .bytes($0) } ?? .file(path: resolution.path, offset: 0, length: size)
        var gzip: PreparedFile.Variant?
        if compressible, size >= FileServer.minimumGzipSize, let hash = resolution.hash,
           let gz = gzipped(hash: hash, path: resolution.path, size: size) {
            // Another representation, another validator (weak, as nginx marks its gzip replies).
            let gzipHeaders = [("ETag", "W/\"\(hash)-gzip\"")] + common + [("Content-Encoding", "gzip")]
            gzip = .init(etag: "W/\"\(hash)-gzip\"", ok: PreparedReply(Reply(status: .ok, headers: gzipHeaders, body: .bytes(gz))),
                         notModified: PreparedReply(Reply(status: .notModified, headers: gzipHeaders.filter { $0.0 != "Content-Encoding" })))
        }
        return PreparedFile(
            uri: resolution.uri, path: resolution.path, size: size, etag: etag, lastModified: modified, source: resolution.source,
            headers: headers, whole: whole, identity: PreparedReply(Reply(status: .ok, headers: headers, body: body)), gzip: gzip,
            notModified: PreparedReply(Reply(status: .notModified, headers: headers)))
    }

    private func isImmutable(_ uri: String) -> Bool {
        immutable.contains { fnmatch($0, uri, 0) == 0 }
    }

    /// The reply when it needs no Range and no new bytes (nil: take `reply`).
    static func choose(_ file: PreparedFile, _ head: HTTPRequestHead) -> PreparedReply? {
        let request = head.headers
        let ranged = head.method == .GET && request.contains(name: "range")
        // Range is answered from the identity representation, so that is the one it is compared with.
        let variant = ranged ? nil : file.gzip.flatMap { acceptsGzip(request.first(name: "accept-encoding")) ? $0 : nil }
        let conditional = ranged || request.contains(name: "if-none-match") || request.contains(name: "if-modified-since")
            || request.contains(name: "if-match") || request.contains(name: "if-unmodified-since")
        guard conditional else { return variant?.ok ?? file.identity }
        switch Preconditions.evaluate(request, method: head.method, etag: variant?.etag ?? file.etag, lastModified: file.lastModified) {
        case .failed: return PreparedReply(Reply(status: .preconditionFailed, headers: file.headers))
        case .notModified: return variant?.notModified ?? file.notModified
        case .proceed(let rangeAllowed): return rangeAllowed ? nil : variant?.ok ?? file.identity
        }
    }

    /// Any request for the file, Range included.
    static func reply(_ file: PreparedFile, _ head: HTTPRequestHead) -> PreparedReply {
        if let chosen = choose(file, head) { return chosen }
        switch ByteRange.parse(head.headers.first(name: "range"), size: file.size) {
        case .whole:
            return file.identity
        case .unsatisfiable:
            return PreparedReply(Reply(status: .rangeNotSatisfiable, headers: file.headers + [("Content-Range", "bytes */\(file.size)")]))
        case .partial(let bytes):
            let body: Reply.Body = file.whole.map { .bytes($0.getSlice(at: $0.readerIndex + bytes.lowerBound, length: bytes.count)!) }
                ?? .file(path: file.path, offset: bytes.lowerBound, length: bytes.count)
            return PreparedReply(Reply(status: .partialContent,
                                       headers: file.headers + [("Content-Range", "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(file.size)")],
                                       body: body))
        }
    }

    /// The body from memory when it is small enough; develop files (no hash) are read every time.
    private func small(_ resolution: Resolution, size: Int) throws(CenariusError) -> ByteBuffer? {
        guard size <= memory.maxEntry else { return nil }
        if let hash = resolution.hash, let cached = memory.get(hash) { return cached }
        let buffer = ByteBuffer(bytes: try FileSystem.readFile(resolution.path))
        if let hash = resolution.hash { memory.put(hash, buffer) }
        return buffer
    }

    /// The gzip variant of an object: from memory, from `<cache>/gzip`, or compressed now.
    /// nil when compression does not pay (under 90% of the original) or the file is large.
    private func gzipped(hash: String, path: String, size: Int) -> ByteBuffer? {
        let key = "gz:" + hash
        if let cached = memory.get(key) { return cached.readableBytes == 0 ? nil : cached }
        guard size <= 16 << 20 else { return nil }
        // Reached by descriptor: a link planted at gzip/ or at a copy is removed, never followed (G5).
        let folder = gzipFolder.flatMap { try? CacheFolder.at(FileSystem.parentDirectory(of: $0))?.folder("gzip") }
        let name = hash + ".gz"
        if let folder, let fd = folder.openFile(name) {
            defer { close(fd) }
            if let bytes = try? FileSystem.readAll(fd, path: folder.path + "/" + name) {
                let buffer = ByteBuffer(bytes: bytes)
                memory.put(key, buffer)
                return buffer.readableBytes == 0 ? nil : buffer
            }
        }
        guard let original = try? FileSystem.readFile(path) else { return nil }
        var output = [UInt8](repeating: 0, count: cplatform_gzip_bound(original.count))
        let produced = original.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { cplatform_gzip(input.baseAddress, input.count, $0.baseAddress, $0.count, 6) }
        }
        // An empty marker records "not worth it" so the work is not repeated.
        let worth = produced > 0 && produced * 10 < original.count * 9
        output.removeSubrange((worth ? produced : 0)...)
        try? folder?.write(output, to: name, durable: false)
        let buffer = ByteBuffer(bytes: output)
        memory.put(key, buffer)
        return worth ? buffer : nil
    }

    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: " ") }
            guard fields.first?.lowercased() == "gzip" else { return false }
            return !fields.dropFirst().contains { field in
                let compact = field.filter { $0 != " " }
                return compact.hasPrefix("q=") && Double(compact.dropFirst(2)) == 0
            }
        }
    }
}
