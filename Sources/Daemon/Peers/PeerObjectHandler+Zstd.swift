import NIOCore
import NIOHTTP1
import NIOPosix
import ResourceCache
import RouteSync

/// A peer that accepts zstd gets an object compressed on the fly (`Content-Encoding: zstd`, level 3):
/// B11 measured the LAN carrying files' exact bytes, 3× to 10× the origin's compressed forms, and the
/// peers' rate cap was then what the devices waited for. libcurl decodes before the asker's hash
/// check, so what is verified and kept is the exact bytes as before; an object zstd cannot shrink by
/// a tenth, or too small or too large to be worth it, goes by sendfile as it is.
extension PeerObjectHandler {
    static let zstdLevel: Int32 = 3
    static let compressible: ClosedRange<Int> = 4096...(16 << 20)

    static func acceptsZstd(_ head: HTTPRequestHead) -> Bool {
        head.headers[canonicalForm: "accept-encoding"].contains { $0 == "zstd" || $0.hasPrefix("zstd;") }
    }

    /// Compressed off the event loop (the daemon's own server shares it), then sent under the rate.
    func sendCompressed(_ hash: ContentHash, head: HTTPRequestHead, context: ChannelHandlerContext) {
        sending = true
        let path = objects.path(hash)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () -> [UInt8]? in
            guard let bytes = try? FileSystem.readFile(path, limit: Self.compressible.upperBound), Self.compressible.contains(bytes.count),
                  let packed = try? Zstd.compress(bytes, level: Self.zstdLevel), packed.count < bytes.count - bytes.count / 10 else { return nil }
            return packed
        }.whenComplete { result in
            let (handler, context) = bound.value
            guard case .success(let packed?) = result else {
                handler.sending = false
                return handler.sendFile(hash, head: head, context: context)
            }
            var headers = HTTPHeaders([("Content-Length", "\(packed.count)"), ("Content-Encoding", "zstd"),
                                       ("Content-Type", "application/octet-stream"), ("Cache-Control", "max-age=31536000, immutable")])
            if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
            context.write(handler.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
            handler.send(ByteBuffer(bytes: packed), head: head, context: context)
        }
    }

    /// One chunk of `body` at its turn under the rate, then the rest.
    private func send(_ body: ByteBuffer, head: HTTPRequestHead, context: ChannelHandlerContext) {
        var body = body
        let chunk = body.readSlice(length: min(body.readableBytes, Int(Self.chunk))) ?? ByteBuffer()
        let wait = rate.reserve(chunk.readableBytes, now: Self.now())
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let rest = body
        let write: @Sendable () -> Void = {
            let (handler, context) = bound.value
            context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(chunk)))).whenComplete { result in
                let (handler, context) = bound.value
                switch result {
                case .success where rest.readableBytes > 0:
                    handler.send(rest, head: head, context: context)
                case .success:
                    handler.sending = false
                    handler.finish(head, context: context)
                case .failure:
                    handler.sending = false
                    context.close(promise: nil)
                }
            }
        }
        if wait <= 0 { write() } else { context.eventLoop.scheduleTask(in: .nanoseconds(Int64(wait * 1e9))) { write() } }
    }
}
