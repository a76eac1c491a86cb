import NIOCore
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

/// What the connection asks for each request: an answer now, on the event loop, when it is
/// already known (a file whose reply is prepared), otherwise one computed off the loop.
protocol HTTPResponder: Sendable {
    func immediate(_ head: HTTPRequestHead) -> PreparedReply?
    /// `body`: the request's body (control API writes), at most `HTTPConnection.maxRequestBody`.
    func respond(_ head: HTTPRequestHead, body: ByteBuffer?) async -> PreparedReply
}

/// A request read whole, waiting for its turn.
struct PendingRequest {
    var head: HTTPRequestHead
    var body: ByteBuffer?
}

/// A reply whose status line and headers are already bytes.
struct PreparedReply: Sendable {
    var head: EncodedHead
    var body: Reply.Body

    init(head: EncodedHead, body: Reply.Body) {
        self.head = head
        self.body = body
    }

    init(_ reply: Reply) {
        head = EncodedHead(reply)
        body = reply.body
    }

    /// The same reply with more headers (CORS for an allowed origin).
    func adding(_ headers: [(String, String)]) -> PreparedReply {
        guard !headers.isEmpty else { return self }
        var bytes = head.bytes
        for (name, value) in headers { bytes.writeString("\(name): \(value)\r\n") }
        return PreparedReply(head: EncodedHead(bytes: bytes), body: body)
    }
}

/// One HTTP/1.1 connection. Replies go out in request order (pipelining): while a reply is
/// computed off the loop, later requests wait in `waiting`, and reading stops when too many do.
/// Bytes are written without an encoder: head and small body in one buffer, files by sendfile.
final class HTTPConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = IOData

    static let maxRequestBody = 64 << 10
    static let maxWaiting = 16
    /// Bodies up to this size are copied behind the head into one write.
    static let inlineBody = 64 << 10

    private let responder: any HTTPResponder
    private let idleTimeout: TimeAmount
    var idleCheck: RepeatedTask?
    var state = StateMachine()
    /// The request being read, and its body's size so far.
    private var receiving: PendingRequest?
    private var bodyBytes = 0
    private var needsFlush = false
    var date = HTTPDateLine()

    /// Where the connection limit reads when this connection last sent a request.
    private let slot: ConnectionSlot?

    init(responder: any HTTPResponder, idleTimeout: TimeAmount, slot: ConnectionSlot? = nil) {
        self.responder = responder
        self.idleTimeout = idleTimeout
        self.slot = slot
    }

    /// Idle keep-alive connections are closed by a check every `idleTimeout`, not by a handler
    /// in front of this one: that would add a hop to every read and write.
    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleCheck = context.eventLoop.scheduleRepeatedTask(initialDelay: idleTimeout, delay: idleTimeout) { _ in
            let (connection, context) = bound.value
            if connection.state.idleCheck() { context.close(promise: nil) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        endStream()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state.takesRequests else { return }
        state.read()
        switch unwrapInboundIn(data) {
        case .head(var head):
            slot?.touch()
            RequestTarget.makeOriginForm(&head)
            receiving = PendingRequest(head: head)
            bodyBytes = 0
        case .body(var chunk):
            bodyBytes += chunk.readableBytes
            if bodyBytes > HTTPConnection.maxRequestBody, let request = receiving {
                receiving = nil
                refuse(.payloadTooLarge, "request bodies are limited to 64 KiB", head: request.head, context: context)
            } else if receiving != nil {
                if receiving?.body == nil {
                    receiving?.body = chunk
                } else {
                    receiving?.body?.writeBuffer(&chunk)
                }
            }
        case .end:
            guard let request = receiving else { return }
            receiving = nil
            switch state.received(request) {
            case .handle(let request): handle(request, context: context)
            case .wait: break
            case .waitAndPauseReading: context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        if let stream = state.inactive() { stream.end() }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            switch state.quiesce() {
            case .none: break
            case .close: close(context)
            case .closeStream(let stream):
                stream.end()
                context.close(promise: nil)
            }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            state.close()
            context.close(promise: nil)
            return
        }
        // Unreadable input ends the connection, but the requests before it are answered; bytes
        // after a request that ended the connection (HTTP/1.0) are simply dropped.
        receiving = nil
        switch state.malformed(connectionClosed: parserError == .closedConnection) {
        case .refuse:
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")
            refuse(.badRequest, "malformed HTTP request", head: head, context: context)
        case .closeIfIdle:
            closeIfIdle(context)
        }
    }

    private func handle(_ request: PendingRequest, context: ChannelHandlerContext) {
        let head = request.head
        if let prepared = responder.immediate(head) {
            write(prepared, for: head, context: context)
            return
        }
        state.replyStarted()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let responder = self.responder
        let body = request.body
        context.eventLoop.makeFutureWithTask { await responder.respond(head, body: body) }.whenSuccess { reply in
            let (connection, context) = bound.value
            guard connection.state.replyComputed() else { return }
            connection.write(reply, for: head, context: context)
            connection.flushIfNeeded(context)
            connection.drain(context)
        }
    }

    /// Answers the requests that waited behind an asynchronous reply.
    private func drain(_ context: ChannelHandlerContext) {
        while let next = state.nextWaiting() {
            handle(next, context: context)
        }
        flushIfNeeded(context)
        if state.resumeReading() {
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
        closeIfIdle(context)
    }

    private func closeIfIdle(_ context: ChannelHandlerContext) {
        if state.closeIfIdle() { close(context) }
    }

    private func close(_ context: ChannelHandlerContext) {
        flushIfNeeded(context)
        context.close(promise: nil)
    }

    private func refuse(_ status: HTTPResponseStatus, _ message: String, head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard state.mayRefuse() else {
            // An answer is still owed to an earlier request; this one cannot jump the queue.
            context.close(promise: nil)
            return
        }
        var reply = Reply(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                          body: .bytes(ByteBuffer(string: message + "\n")))
        reply.headers.append(("Connection", "close"))
        var head = head
        head.headers.replaceOrAdd(name: "connection", value: "close")
        write(PreparedReply(reply), for: head, context: context)
    }

    private func write(_ prepared: PreparedReply, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        let sendBody = request.method != .HEAD
        if sendBody, case .events(let events) = prepared.body {
            startStream(events, head: prepared.head, context: context)
            return
        }
        let keepAlive = state.keepsAlive(request.isKeepAlive)
        var file: (NIOFileHandle, FileRegion)?
        if sendBody, case .file(let path, let offset, let length) = prepared.body {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                write(PreparedReply(Reply(status: .notFound, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                          body: .bytes(ByteBuffer(string: "the file behind this uri vanished\n")))),
                      for: request, context: context)
                return
            }
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd)
            file = (handle, FileRegion(fileHandle: handle, readerIndex: offset, endIndex: offset + length))
        }
        var out = context.channel.allocator.buffer(capacity: prepared.head.bytes.readableBytes + 64)
        out.writeImmutableBuffer(prepared.head.bytes)
        out.writeBytes(date.current())
        if !keepAlive {
            out.writeStaticString("Connection: close\r\n")
        } else if request.version.minor == 0 {
            out.writeStaticString("Connection: keep-alive\r\n")
        }
        out.writeStaticString("\r\n")
        if sendBody, case .bytes(var body) = prepared.body {
            if body.readableBytes <= HTTPConnection.inlineBody {
                out.writeBuffer(&body)
            } else {
                context.write(wrapOutboundOut(.byteBuffer(out)), promise: nil)
                out = body
            }
        }
        if let (handle, region) = file {
            // Corked, the head leaves in the same segments as the file's first bytes instead of
            // a packet of its own (what nginx's tcp_nopush does with sendfile).
            let cork = ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_CORK))
            context.channel.setOption(cork, value: 1).whenComplete { _ in }
            context.write(wrapOutboundOut(.byteBuffer(out)), promise: nil)
            let channel = context.channel
            context.write(wrapOutboundOut(.fileRegion(region))).whenComplete { _ in
                try? handle.close()
                channel.setOption(cork, value: 0).whenComplete { _ in }
            }
        } else {
            context.write(wrapOutboundOut(.byteBuffer(out)), promise: nil)
        }
        needsFlush = true
        if !keepAlive {
            state.close()
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer()))).whenComplete { _ in bound.value.close(promise: nil) }
            needsFlush = false
        }
    }

    private func flushIfNeeded(_ context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }
}
