import CPlatform
import HTTPTypes
import Hummingbird
import ResourceCache
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// Answers `GET|HEAD /<uri>` once the lookup has picked a file: ETag = the route hash,
/// If-None-Match → 304, Range → 206, Content-Type by extension, gzip when accepted (compressed
/// once per object and kept in the cache), `Cache-Control: no-cache`.
struct FileServer: Sendable {
    let memory: ContentCache
    /// `<cache>/gzip`: compressed copies by hash, written atomically, shared by restarts.
    let gzipFolder: String?
    let fileIO = FileIO()

    static let minimumGzipSize = 256

    func respond(_ resolution: Resolution, request: Request, context: some RequestContext) async throws -> Response {
        var info = stat()
        guard lstat(resolution.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw CenariusError.notFound("\(resolution.uri) vanished")
        }
        let size = Int(info.st_size)
        let etag = resolution.hash.map { "\"\($0)\"" } ?? "W/\"\(size)-\(info.st_mtim.tv_sec)\""
        let type = MediaTypes.type(for: resolution.uri)
        let compressible = MediaTypes.compresses(type)
        var headers = HTTPFields()
        headers[.eTag] = etag
        headers[.cacheControl] = "no-cache"
        headers[.acceptRanges] = "bytes"
        headers[.contentType] = type
        if compressible { headers[.vary] = "Accept-Encoding" }
        headers[HTTPField.Name("X-Cenarius-Source")!] = resolution.source.rawValue
        if resolution.stale { headers[HTTPField.Name("X-Cenarius-Stale")!] = "1" }

        if let match = request.headers[.ifNoneMatch], FileServer.matches(match, etag) {
            return Response(status: .notModified, headers: headers)
        }
        let isHead = request.method == .head
        var range = ByteRange.parse(request.headers[.range], size: size)
        if let ifRange = request.headers[.ifRange], ifRange != etag { range = .whole }

        if case .whole = range, compressible, size >= FileServer.minimumGzipSize, let hash = resolution.hash,
           FileServer.acceptsGzip(request.headers[.acceptEncoding]), let gz = gzipped(hash: hash, path: resolution.path, size: size) {
            headers[.contentEncoding] = "gzip"
            headers[.contentLength] = String(gz.readableBytes)
            return Response(status: .ok, headers: headers, body: isHead ? .init() : .init(byteBuffer: gz))
        }

        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .partial(let bytes):
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(size)"
            headers[.contentLength] = String(bytes.count)
            if isHead { return Response(status: .partialContent, headers: headers) }
            if let whole = try small(resolution, size: size) {
                return Response(status: .partialContent, headers: headers,
                                body: .init(byteBuffer: whole.getSlice(at: whole.readerIndex + bytes.lowerBound, length: bytes.count)!))
            }
            return Response(status: .partialContent, headers: headers,
                            body: try await fileIO.loadFile(path: resolution.path, range: bytes, context: context))
        case .whole:
            headers[.contentLength] = String(size)
            if isHead { return Response(status: .ok, headers: headers) }
            if let whole = try small(resolution, size: size) {
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: whole))
            }
            return Response(status: .ok, headers: headers, body: try await fileIO.loadFile(path: resolution.path, context: context))
        }
    }

    /// The body from memory when it is small enough; develop files (no hash) are read every time.
    private func small(_ resolution: Resolution, size: Int) throws -> ByteBuffer? {
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
        let diskPath = gzipFolder.map { $0 + "/" + hash + ".gz" }
        if let diskPath, let bytes = try? FileSystem.readFile(diskPath) {
            let buffer = ByteBuffer(bytes: bytes)
            memory.put(key, buffer)
            return buffer.readableBytes == 0 ? nil : buffer
        }
        guard let original = try? FileSystem.readFile(path) else { return nil }
        var output = [UInt8](repeating: 0, count: cplatform_gzip_bound(original.count))
        let produced = original.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { cplatform_gzip(input.baseAddress, input.count, $0.baseAddress, $0.count, 6) }
        }
        // An empty marker records "not worth it" so the work is not repeated.
        let worth = produced > 0 && produced * 10 < original.count * 9
        output.removeSubrange((worth ? produced : 0)...)
        if let gzipFolder, let diskPath {
            try? FileSystem.makeDirectories(gzipFolder)
            try? FileSystem.writeAtomically(output, to: diskPath, durable: false)
        }
        let buffer = ByteBuffer(bytes: output)
        memory.put(key, buffer)
        return worth ? buffer : nil
    }

    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: " ")
            return trimmed == "*" || trimmed == etag || trimmed == "W/" + etag
        }
    }

    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: " ") }
            guard fields.first?.lowercased() == "gzip" else { return false }
            return !fields.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "q=0" }
        }
    }
}
