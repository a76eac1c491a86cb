import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// One peer connection: `GET`/`HEAD /_cenarius/f/<hash>` answers the exact bytes of an object
/// the cache holds, and `/_cenarius/z/…` and `/_cenarius/p/…` the forms it kept (PeerForms), at
/// the listener's rate; anything else is a 404 (405 for other methods) and never the site or the
/// control API, which this listener does not know (docs/peers.md).
final class PeerObjectHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bytes per write: small enough that the rate cap is smooth, large enough for sendfile.
    static let chunk: Int64 = 64 << 10
    let objects: ObjectStore
    /// The forms this device kept for its peers.
    let forms: PeerForms
    /// What this device's sync is fetching: asked for one of those, the answer is "not yet".
    let fetching: PeerFetching
    let rate: PeerRate
    /// Past `--peer-max-connections`: every request is told to come back later.
    let busy: Bool
    let nudge: PeerNudge?
    /// Seconds a busy listener asks a peer to wait.
    static let retryAfter = 10
    private var request: HTTPRequestHead?
    var sending = false

    init(objects: ObjectStore, fetching: PeerFetching, rate: PeerRate, busy: Bool, nudge: PeerNudge? = nil) {
        self.objects = objects
        forms = PeerForms(layout: objects.layout)
        self.fetching = fetching
        self.rate = rate
        self.busy = busy
        self.nudge = nudge
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request, !sending else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    /// The hash a target names, when it is `/_cenarius/f/<hex>` and nothing else.
    static func object(_ target: String) -> ContentHash? {
        let prefix = "/" + ReleaseIndex.plainPath(ContentHash(hex: String(repeating: "0", count: 32))!).dropLast(32)
        guard target.hasPrefix(prefix) else { return nil }
        let hex = String(target.dropFirst(prefix.count))
        guard hex.utf8.count == 32 || hex.utf8.count == 64, let hash = ContentHash(hex: hex), hash.hex == hex else { return nil }
        return hash
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard !busy else {
            var closing = head
            closing.headers.replaceOrAdd(name: "connection", value: "close")
            return answer(.serviceUnavailable, "too many peers at once\n", head: closing, context: context,
                          extra: [("Retry-After", "\(Self.retryAfter)")])
        }
        guard head.method == .GET || head.method == .HEAD else {
            return answer(.methodNotAllowed, "only GET and HEAD of store objects\n", head: head, context: context)
        }
        guard let hash = Self.object(head.uri) else { return respondForm(to: head, context: context) }
        respondObject(hash, head: head, context: context, until: Self.now() + Self.holdLimit)
    }

    /// The object held, or as it arrives (one of this device's share's plain files, FormRound);
    /// else "not yet" while this device fetches it: at once to a device asking in case it holds it
    /// already, and to one asking it as the owner (PeerSources.ownerHeader) once its download has
    /// not begun by `deadline` (the asker waits rather than take it from the origin too).
    private func respondObject(_ hash: ContentHash, head: HTTPRequestHead, context: ChannelHandlerContext, until deadline: Double) {
        sending = false
        guard objects.contains(hash) else {
            guard fetching.contains(hash) else { return missing(head, context: context) }
            return sendArriving(hash.hex, holding: head.headers.contains(name: PeerSources.ownerHeader), head: head, context: context, until: deadline) {
                handler, context in handler.respondObject(hash, head: head, context: context, until: deadline)
            }
        }
        if head.method == .GET, Self.acceptsZstd(head), Zstd.isAvailable {
            return sendCompressed(hash, head: head, context: context)
        }
        sendFile(objects.path(hash), head: head, context: context)
    }

    /// Neither held nor being fetched: a `404`, but "not yet" while this device polls for the
    /// release its asker names, which it fetches none of (PeerNudge).
    func missing(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        if let release = head.headers.first(name: PeerSources.releaseHeader), fetching.current == nil,
           nudge?.nudged(for: release, now: Self.now()) == true {
            return answer(.serviceUnavailable, "not yet: this device is polling for that release\n", head: head, context: context, extra: [("Retry-After", "1")])
        }
        answer(.notFound, "not an object this device holds\n", head: head, context: context)
    }

    /// An object's exact bytes (or a kept form's), by sendfile.
    func sendFile(_ path: String, head: HTTPRequestHead, context: ChannelHandlerContext) {
        // No link is followed: objects and forms are files the cache wrote itself (G5).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        var status = stat()
        guard fd >= 0, fstat(fd, &status) == 0 else {
            if fd >= 0 { close(fd) }
            return answer(.notFound, "not an object this device holds\n", head: head, context: context)
        }
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd)
        let size = Int64(status.st_size)
        context.write(wrapOutboundOut(.head(Self.objectHead(head, length: size))), promise: nil)
        guard head.method == .GET, size > 0 else {
            try? handle.close()
            return finish(head, context: context)
        }
        sending = true
        send(.file(handle, from: 0, size: size), head: head, context: context)
    }

    /// An object's answer head: immutable, as its name is its hash; `encoding` when it goes compressed.
    static func objectHead(_ head: HTTPRequestHead, length: Int64, encoding: String? = nil) -> HTTPResponseHead {
        var headers = HTTPHeaders([("Content-Length", "\(length)"), ("Content-Type", "application/octet-stream"),
                                   ("Cache-Control", "max-age=31536000, immutable")])
        if let encoding { headers.add(name: "Content-Encoding", value: encoding) }
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        return HTTPResponseHead(version: head.version, status: .ok, headers: headers)
    }

    /// One chunk at its turn under the rate, then the next: a file's bytes leave by sendfile,
    /// never read into memory.
    func send(_ body: PeerBody, head: HTTPRequestHead, context: ChannelHandlerContext, first: Bool = true) {
        let (chunk, rest) = body.split(Self.chunk)
        pace(chunk, small: first && rest == nil, context: context) { handler, context, sent in
            if sent, let rest { return handler.send(rest, head: head, context: context, first: false) }
            body.close()
            handler.sending = false
            if sent { handler.finish(head, context: context) } else { context.close(promise: nil) }
        }
    }

    /// `chunk` written at its turn under the rate, then `next` with whether it went. Through the
    /// loop: a write that completed at once runs its callback inline, and a large object's chunks
    /// would otherwise nest a call deeper each.
    func pace(_ chunk: IOData, small: Bool = false, context: ChannelHandlerContext,
              next: @escaping @Sendable (PeerObjectHandler, ChannelHandlerContext, _ sent: Bool) -> Void) {
        let wait = rate.reserve(chunk.readableBytes, now: Self.now(), small: small)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let write: @Sendable () -> Void = {
            let (handler, context) = bound.value
            context.writeAndFlush(handler.wrapOutboundOut(.body(chunk))).whenComplete { result in
                let sent = if case .success = result { true } else { false }
                bound.value.1.eventLoop.execute {
                    let (handler, context) = bound.value
                    next(handler, context, sent)
                }
            }
        }
        if wait <= 0 { write() } else { context.eventLoop.scheduleTask(in: .nanoseconds(Int64(wait * 1e9))) { write() } }
    }

    func answer(_ status: HTTPResponseStatus, _ text: String, head: HTTPRequestHead, context: ChannelHandlerContext,
                        extra: [(String, String)] = []) {
        var headers = HTTPHeaders([("Content-Length", "\(text.utf8.count)"), ("Content-Type", "text/plain; charset=utf-8")] + extra)
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil) }
        finish(head, context: context)
    }

    func finish(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { bound.value.close(promise: nil) }
        }
    }

    /// A peer that neither sends nor reads for the idle timeout (a stalled reader, a held-open
    /// socket) gives its slot back.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent { context.close(promise: nil) } else { context.fireUserInboundEventTriggered(event) }
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// An object answer's body: a file's bytes by sendfile, or a compressed copy in memory.
enum PeerBody: Sendable {
    case file(NIOFileHandle, from: Int64, size: Int64)
    case bytes(ByteBuffer)

    /// The next chunk of at most `limit` bytes, and what is left after it (nil: nothing).
    func split(_ limit: Int64) -> (IOData, PeerBody?) {
        switch self {
        case .file(let handle, let offset, let size):
            let end = min(size, offset + limit)
            let region = FileRegion(fileHandle: handle, readerIndex: Int(offset), endIndex: Int(end))
            return (.fileRegion(region), end < size ? .file(handle, from: end, size: size) : nil)
        case .bytes(var buffer):
            let chunk = buffer.readSlice(length: min(buffer.readableBytes, Int(limit))) ?? ByteBuffer()
            return (.byteBuffer(chunk), buffer.readableBytes > 0 ? .bytes(buffer) : nil)
        }
    }

    /// The file closed once its body is sent or given up; a buffer needs nothing.
    func close() {
        if case .file(let handle, _, _) = self { try? handle.close() }
    }
}
