import RouteSync
import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Validators of a fetched document, sent back on the next request (G4).
package struct Validators: Sendable, Equatable, Codable {
    package var etag: String?
    package var lastModified: String?

    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    package var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// Where a transfer's body goes.
enum Sink {
    /// A file; once complete it is hashed from disk and verified against `expected`.
    case file(path: String, expected: ContentHash)
    /// Memory, for route tables and signatures; `validators` makes the request conditional.
    case memory(validators: Validators?)
}

/// One transfer's state. Lives on the downloader's loop thread only; libcurl's C callbacks
/// reach it through `CURLOPT_PRIVATE`-style user data while the easy handle is in the multi handle.
final class Transfer {
    let index: Int
    /// Where the current attempt goes: the first mirror's URL, a redirect's target, or the next mirror's.
    var url: String
    let label: String
    /// The host (and port) of the current attempt, as errors name it.
    var host: String { Remote.authority(of: url) ?? url }
    let sink: Sink
    let maxBytes: Int64
    var attempt = 0
    var notBefore = 0.0
    /// The same document on the mirrors not tried yet.
    var mirrors: [String] = []
    /// Redirects followed since the last mirror was chosen.
    var redirects = 0
    /// A policy of its own (documents in the daemon make one attempt); nil: the downloader's.
    var policy: RetryPolicy?
    /// False: the body is a form decoded and verified afterwards (FileDownload.checksHash).
    var checksHash = true
    /// `--max-rate` for the run this transfer belongs to.
    var gate: RateGate?
    /// Paused by the gate; the loop resumes it when the run is back within its rate.
    var paused = false
    /// libcurl's detail of the last error (CURLOPT_ERRORBUFFER): the TLS failures are told apart by it.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// The connection's socket when the last attempt ended, while libcurl keeps it (KeptConnections).
    var socket: Int32 = -1
    /// False: libcurl closes the connection when the transfer ends (a daemon's infrequent polls).
    var keepConnection = true
    /// Headers of this request alone (a poll's Cenarius-Report), sent to the document's own host only.
    var extraHeaders: [String] = []
    /// False: no Accept-Encoding. A head and the store's objects gain nothing from it (a head is
    /// a few hundred bytes, the objects are compressed already), and it is 42 bytes of every
    /// unchanged poll (B7).
    var acceptsEncoding = true
    /// A LAN peer's file: `Accept-Encoding: zstd`, which its listener compresses on the fly and
    /// libcurl decodes before the hash check (a whole body, never a range).
    var fromPeer = false
    /// A HEAD request: what opens a connection ahead of the requests that will use it (Downloader.warm).
    var headOnly = false
    /// The start of an error response's body (nginx names a refused client certificate only there).
    var errorBody: [UInt8] = []

    // Per attempt.
    var status: Int { headers.status }
    var headers = ResponseHeaders()
    var failure: CenariusError?
    var received: Int64 = 0
    var body: [UInt8] = []
    /// Body bytes of every attempt, error bodies and discarded ones included: what the link carried.
    var wire: Int64 = 0
    /// A slice of a larger object (FileDownload.Slice), and how much of it is in the file.
    var slice: FileDownload.Slice?
    var written: Int64 = 0
    /// A body served on while it grows (FileDownload.growing): each chunk written as it arrives.
    var growing: GrowingFile?
    /// A member of a tar read in place (TarMembers): the attempt asks for its byte range, and
    /// keeps no byte past its size.
    private(set) var member: TarMembers.Range?

    // Kept across attempts so an interrupted body can resume with Range + If-Range (G4).
    var fd: Int32 = -1
    var resumeValidator: String?
    var resumedFrom: Int64 = 0
    var errorBytes = 0
    /// Body bytes not yet written. libcurl hands over at most 16 KiB per callback; writing in
    /// `writeChunk`s (most web assets: one write) takes three of every four syscalls off the
    /// loop. A body of up to `wholeLimit` bytes whose length is announced is held whole instead,
    /// in one buffer of exactly that size, when `budget` allows: the hash worker then writes it
    /// in one go and hashes it from memory, and the loop makes no file syscall for it at all.
    private var unwritten: BodyBuffer?
    /// Budget taken by `unwritten` (a whole body's buffer); 0 for the plain write buffer.
    private var reserved = 0
    var budget: BodyBudget?
    static let writeChunk = 64 << 10
    static let wholeLimit = 1 << 20

    init(index: Int, url: String, label: String, sink: Sink, maxBytes: Int64) {
        self.index = index
        self.url = url
        self.label = label
        self.sink = sink
        self.maxBytes = maxBytes
        errorBuffer.initialize(to: 0)
    }

    deinit { errorBuffer.deallocate() }

    /// Moves on to the next mirror, from scratch; false when there is none.
    func nextMirror() -> Bool {
        guard !mirrors.isEmpty else { return false }
        url = mirrors.removeFirst()
        attempt = 0
        redirects = 0
        notBefore = 0
        resumeValidator = nil
        discardPartial()
        return true
    }

    var lastErrorDetail: String {
        errorBuffer[Int(CURL_ERROR_SIZE)] = 0
        return String(cString: errorBuffer)
    }

    /// Resets per-attempt state; decides whether this attempt asks for the rest of a partial body.
    func beginAttempt() -> (range: Int64, ifRange: String)? {
        attempt += 1
        member = TarMembers.range(of: url)
        headers = ResponseHeaders()
        failure = nil
        errorBytes = 0
        errorBody.removeAll()
        errorBuffer[0] = 0
        body.removeAll(keepingCapacity: true)
        if case .file = sink, received > 0, let validator = resumeValidator {
            resumedFrom = received
            return (received, validator)
        }
        discardPartial()
        return nil
    }

    func discardPartial() {
        dropBuffer()
        received = 0
        resumedFrom = 0
        written = 0
        // A slice's file is shared: its bytes are written again in their place, the same bytes
        // (an immutable object), so nothing is cut.
        guard slice == nil else { return }
        // A reader serving it on has sent bytes that are no longer the body's start.
        if fd >= 0 { growing?.fail() }
        if fd >= 0, ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0 {
            failure = FileSystem.failure("cannot truncate", path ?? url)
        }
    }

    var path: String? {
        if case .file(let path, _) = sink { return path }
        return nil
    }

    var isSuccessStatus: Bool {
        // file:// transfers report 0.
        status == 200 || status == 206 || (status == 0 && url.hasPrefix("file:"))
    }

    /// Called from libcurl's write callback. Returning less than `count` aborts the transfer.
    func receive(_ given: UnsafeRawBufferPointer) -> Int {
        guard let data = withinMember(given) else { return given.count }
        if let pause = throttle(data.count) { return pause }
        wire += Int64(data.count)
        guard isSuccessStatus else { return keepErrorBody(data) }
        guard takesRangeAnswer() else { return 0 }
        if status == 200 && resumedFrom > 0 {
            // The server ignored If-Range (the file changed): start over from byte 0.
            discardPartial()
        }
        if received + Int64(data.count) > maxBytes {
            failure = .integrity("\(label): body larger than the \(maxBytes)-byte limit \(limitName)")
            return 0
        }
        guard store(data) else { return 0 }
        received += Int64(data.count)
        return given.count
    }

    /// The part of `data` inside the tar member being read; nil once the member is whole.
    /// libcurl's file:// reads at least one byte of a range (an empty member's), and its
    /// Content-Length is the whole tar's: the member's size is what counts.
    private func withinMember(_ data: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let member else { return data }
        let room = max(0, member.size - received)
        guard room > 0 else { return nil }
        return data.count > room ? UnsafeRawBufferPointer(rebasing: data.prefix(Int(room))) : data
    }

    /// Holds the transfer to --max-rate: nil to take `count` bytes now, else what to answer libcurl.
    private func throttle(_ count: Int) -> Int? {
        guard let gate else { return nil }
        if url.hasPrefix("file:") {
            // libcurl cannot pause a file:// transfer (a PAUSE fails it): the loop waits here, as
            // a slow stick would make it wait, holding up only other reads of local files.
            var wait = gate.wait()
            while wait > 0 {
                usleep(useconds_t(min(wait, 0.25) * 1_000_000))
                wait = gate.wait()
            }
        } else if gate.wait() != 0 {
            // Ahead of the rate: libcurl keeps this chunk and offers it again once the loop resumes the transfer.
            paused = true
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        gate.add(count)
        return nil
    }

    /// An error body is read (so the connection can be reused) but not kept, but for its start.
    private func keepErrorBody(_ data: UnsafeRawBufferPointer) -> Int {
        if errorBody.count < 512 { errorBody += data.prefix(512 - errorBody.count) }
        errorBytes += data.count
        return errorBytes > 1 << 16 ? 0 : data.count
    }

    /// A server that ignores Range sends the whole object (a 200, or a file:// URL's 0): the
    /// first slice takes it all, and covers the others (GrowingFile.wrote); the others end here.
    private func takesRangeAnswer() -> Bool {
        guard var slice, status != 206 else { return true }
        guard slice.index == 0 else {
            failure = .remote("\(label): \(url) answered HTTP \(status) to a Range request")
            return false
        }
        slice.end = nil
        self.slice = slice
        return true
    }

    /// Keeps `data`: in memory, or buffered for the file; false when the file cannot be written.
    private func store(_ data: UnsafeRawBufferPointer) -> Bool {
        switch sink {
        case .memory:
            body.append(contentsOf: data)
        case .file:
            // Read as it grows by a LAN peer: each chunk written as it comes.
            if growing != nil || slice?.writesThrough == true { return write(data) }
            let buffer = unwritten ?? newBuffer()
            // Written only when the next bytes would not fit: a body that fits stays whole.
            if buffer.count + data.count > buffer.capacity, !flush() { return false }
            // More than the buffer holds, arriving at once, goes straight to the file (a server
            // may send more than the length it announced, with chunked encoding).
            if data.count <= buffer.capacity {
                buffer.append(data)
            } else if !write(data) {
                return false
            }
        }
        return true
    }

    /// Writes what is buffered; false, with `failure` set, when the file cannot be written.
    func flush() -> Bool {
        guard let buffer = unwritten, !buffer.isEmpty else { return true }
        defer { buffer.removeAll() }
        return write(buffer.bytes)
    }

    /// Appends to the file, creating it on first use; false, with `failure` set, when it cannot be written.
    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard case .file(let path, _) = sink else { return true }
        if let slice { return write(bytes, at: slice, path: path) }
        if fd < 0 {
            fd = FileSystem.createFile(path)
            if fd < 0 {
                failure = FileSystem.failure("cannot create", path)
                return false
            }
        }
        guard FileSystem.writeAll(fd, bytes) else {
            failure = FileSystem.failure("cannot write", path)
            return false
        }
        return true
    }

    /// A slice's bytes, at their place in the shared file, which readers may then read up to.
    private func write(_ bytes: UnsafeRawBufferPointer, at slice: FileDownload.Slice, path: String) -> Bool {
        if fd < 0 {
            fd = open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 {
                failure = FileSystem.failure("cannot open", path)
                return false
            }
        }
        guard FileSystem.writeAll(fd, bytes, at: slice.start + written) else {
            failure = FileSystem.failure("cannot write", path)
            return false
        }
        written += Int64(bytes.count)
        slice.file.wrote(slice: slice.index, count: written)
        return true
    }

    /// Called from libcurl's header callback with one raw header line.
    func header(_ line: UnsafeRawBufferPointer) -> Int {
        headers.consume(line)
        if let length = headers.contentLength, length > maxBytes, headers.status == 200 {
            failure = .integrity("\(label): Content-Length \(length) is larger than the \(maxBytes)-byte limit \(limitName)")
            return 0
        }
        return line.count
    }

    /// Which limit applies, for the message.
    var limitName: String {
        if case .memory = sink { return "(route tables and signatures)" }
        return "(--max-file-size)"
    }

    /// The buffer for a body starting now: its whole announced length when that is at most
    /// `wholeLimit` and the budget has room, else the write chunk (or less, for a shorter body).
    private func newBuffer() -> BodyBuffer {
        var size = Self.writeChunk
        if slice == nil, let length = member?.size ?? headers.contentLength, length > 0, length <= Self.wholeLimit {
            if fd < 0, resumedFrom == 0, budget?.reserve(Int(length)) == true {
                reserved = Int(length)
                size = reserved
            } else {
                size = min(size, Int(length))
            }
        }
        let buffer = BodyBuffer(capacity: size)
        unwritten = buffer
        return buffer
    }

    private func dropBuffer() {
        unwritten = nil
        budget?.release(reserved)
        reserved = 0
    }

    /// The body has ended: everything reaches the file before it is hashed or its length is
    /// remembered for a resume, and the buffer goes back while the file waits for its check.
    func endBody() {
        _ = flush()
        dropBuffer()
    }

    /// The whole body, when none of it has reached the file yet, with the budget it holds: the
    /// hash worker then writes it and hashes it from memory, so the download loop makes no file
    /// syscall for it and nothing is read back. nil when part of it is already in the file, or
    /// when a small body finds the budget spent.
    func takeWholeBody() -> (bytes: BodyBuffer, reserved: Int)? {
        guard case .file = sink, slice == nil, fd < 0, failure == nil, isSuccessStatus else { return nil }
        let body = unwritten ?? BodyBuffer(capacity: 0)
        if reserved == 0 {
            guard budget?.reserve(body.capacity) == true else { return nil }
            reserved = body.capacity
        }
        defer {
            unwritten = nil
            reserved = 0
        }
        return (body, reserved)
    }

    func closeFile() {
        dropBuffer()
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }
}
