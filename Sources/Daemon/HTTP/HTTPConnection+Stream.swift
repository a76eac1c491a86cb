import NIOCore
import NIOHTTP1

/// An event stream on a connection: after its head the connection only carries events, each
/// one HTTP/1.1 chunk, until either side closes it. An idle stream costs a timer every
/// `keepAlive` (a comment line, so that proxies and browsers keep it open) and nothing else.
struct StreamingState {
    let hub: EventHub
    let token: Int
    let keepAlive: RepeatedTask

    func end() {
        keepAlive.cancel()
        hub.unsubscribe(token)
    }
}

extension HTTPConnection {
    static let streamKeepAlive: TimeAmount = .seconds(25)

    func startStream(_ events: EventStream, head: EncodedHead, context: ChannelHandlerContext) {
        // Requests pipelined behind are dropped, but the connection goes on being read: the
        // client's close is seen at once (the stream ends, and leaves the gauge), even from a
        // client that never reads what it is sent.
        idleCheck?.cancel()
        idleCheck = nil
        context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }

        var out = context.channel.allocator.buffer(capacity: head.bytes.readableBytes + 64)
        out.writeImmutableBuffer(head.bytes)
        out.writeBytes(date.current())
        out.writeStaticString("\r\n")
        // A comment first, so that the client sees the stream open before any event.
        HTTPConnection.appendChunk(ByteBuffer(string: ": cenariusd events\nretry: 2000\n\n"), to: &out)

        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let (token, missed) = events.hub.subscribe(after: events.lastEventID) { bytes in
            loop.execute {
                let (connection, context) = bound.value
                connection.sendEvent(bytes, context: context)
            }
        }
        for event in missed { HTTPConnection.appendChunk(event, to: &out) }
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(out)), promise: nil)
        let keepAlive = loop.scheduleRepeatedTask(initialDelay: HTTPConnection.streamKeepAlive, delay: HTTPConnection.streamKeepAlive) { _ in
            let (connection, context) = bound.value
            connection.sendEvent(ByteBuffer(string: ": keep-alive\n\n"), context: context)
        }
        state.startStream(StreamingState(hub: events.hub, token: token, keepAlive: keepAlive))
    }

    func sendEvent(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        guard state.isStreaming else { return }
        var out = context.channel.allocator.buffer(capacity: bytes.readableBytes + 16)
        HTTPConnection.appendChunk(bytes, to: &out)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(out)), promise: nil)
    }

    func endStream() {
        state.endStream()?.end()
    }

    static func appendChunk(_ bytes: ByteBuffer, to out: inout ByteBuffer) {
        out.writeString(String(bytes.readableBytes, radix: 16))
        out.writeStaticString("\r\n")
        out.writeImmutableBuffer(bytes)
        out.writeStaticString("\r\n")
    }
}
