import NIOCore
import ResourceCache
import Synchronization

/// A file's replies, ready to be written: the whole body (from memory or by sendfile), its
/// gzip variant when that pays, and the 304. A class: the hot path takes one reference out of
/// the shared table instead of copying a dozen.
final class PreparedFile: Sendable {
    let uri: String
    let path: String
    let size: Int
    let etag: String
    /// Seconds since 1970: when the content arrived (its object's mtime).
    let lastModified: Int
    let source: Resolution.Source
    let headers: [(String, String)]
    /// The body when it is held in memory (small files).
    let whole: ByteBuffer?
    let identity: PreparedReply
    let gzip: Variant?
    let notModified: PreparedReply

    /// The gzip representation: its own validator, its 200 and its 304.
    struct Variant: Sendable {
        let etag: String
        let ok: PreparedReply
        let notModified: PreparedReply
    }

    init(uri: String, path: String, size: Int, etag: String, lastModified: Int, source: Resolution.Source, headers: [(String, String)],
         whole: ByteBuffer?, identity: PreparedReply, gzip: Variant?, notModified: PreparedReply) {
        self.uri = uri
        self.path = path
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.source = source
        self.headers = headers
        self.whole = whole
        self.identity = identity
        self.gzip = gzip
        self.notModified = notModified
    }

    /// Bytes of memory the entry holds on to.
    var cost: Int {
        (whole?.readableBytes ?? 0) + (gzip.map { $0.ok.head.bytes.readableBytes + $0.ok.bodyBytes + $0.notModified.head.bytes.readableBytes } ?? 0)
            + identity.head.bytes.readableBytes + notModified.head.bytes.readableBytes + uri.utf8.count + path.utf8.count
    }
}

extension PreparedReply {
    var bodyBytes: Int {
        if case .bytes(let buffer) = body { return buffer.readableBytes }
        return 0
    }
}

/// Prepared files of the current generation, by request path. A generation is immutable and a
/// hash names one content, so an entry stays right for as long as its generation is current;
/// when another generation becomes current the whole set is dropped. Bounded by a byte budget.
final class PreparedFiles: Sendable {
    private struct State {
        var generation = -1
        var entries: [String: PreparedFile] = [:]
        var bytes = 0
    }

    private let state = Mutex(State())
    let budget: Int
    let maxEntries: Int

    init(budget: Int, maxEntries: Int = 100_000) {
        self.budget = budget
        self.maxEntries = maxEntries
    }

    /// The entry for a request target (its path; a query does not change the file).
    func get(generation: Int, target: String) -> PreparedFile? {
        let path = target.utf8.contains(UInt8(ascii: "?")) ? String(RequestTarget.path(of: target)) : target
        return state.withLock { state in
            state.generation == generation ? state.entries[path] : nil
        }
    }

    func put(generation: Int, path: String, _ file: PreparedFile) {
        let cost = file.cost
        state.withLock { state in
            if state.generation != generation {
                // The caller saw this generation current before and after its lookup.
                state = State()
                state.generation = generation
            }
            // A full set stays as it is: the files outside it take the slower path.
            guard state.entries[path] == nil, state.bytes + cost <= budget, state.entries.count < maxEntries else { return }
            state.entries[path] = file
            state.bytes += cost
        }
    }
}
