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
                return handler.sendFile(path, head: head, context: context)
            }
            context.write(handler.wrapOutboundOut(.head(Self.objectHead(head, length: Int64(packed.count), encoding: "zstd"))), promise: nil)
            handler.send(.bytes(ByteBuffer(bytes: packed)), head: head, context: context)
        }
    }
}
