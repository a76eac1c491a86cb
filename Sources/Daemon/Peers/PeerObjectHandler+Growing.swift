import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// A form this device is still downloading for its share, served as it arrives (chunked, marked
/// `Cenarius-Growing`), so that its peers have it about when it does rather than once it is whole
/// and then in turn through the rate cap (B11: a first install's largest form reached seven
/// askers 2.5 s after its owner). Nothing new to trust: the asker decodes the form and checks the
/// file against the signed table, as it would a whole one; a download that breaks off or starts
/// again here breaks the stream off, and the asker asks again (docs/peers.md).
extension PeerObjectHandler {
    /// Polls for more of a growing form this often: a link's bytes arrive every millisecond or so.
    static let growingPoll = TimeAmount.milliseconds(10)

    /// The download announced as `name` sent as it arrives, once it has begun; until then, while
    /// `holding` and before `deadline`, `again` a moment later; else "not yet".
    func sendArriving(_ name: String, holding: Bool, head: HTTPRequestHead, context: ChannelHandlerContext, until deadline: Double,
                      again: @escaping @Sendable (PeerObjectHandler, ChannelHandlerContext) -> Void) {
        if let growing = fetching.growing(name), sendGrowing(growing, head: head, context: context) { return }
        guard holding, head.method == .GET, Self.now() < deadline, context.channel.isActive else {
            return answer(.serviceUnavailable, "not yet: this device is fetching it\n", head: head, context: context, extra: [("Retry-After", "1")])
        }
        sending = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: Self.growingPoll) {
            let (handler, context) = bound.value
            again(handler, context)
        }
    }

    /// Streams `file` when its download has begun (its first bytes are in); false when not yet.
    func sendGrowing(_ file: GrowingFile, head: HTTPRequestHead, context: ChannelHandlerContext) -> Bool {
        guard head.method == .GET, !file.isFailed else { return false }
        let fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        var headers = HTTPHeaders([("Content-Type", "application/octet-stream"), ("Cenarius-Growing", "1"), ("Transfer-Encoding", "chunked")])
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        sending = true
        pump(NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd), from: 0, of: file, head: head, context: context)
        return true
    }

    /// The next chunk written so far, under the rate; a wait when there is none yet; the end once
    /// the download is done and all of it sent; the connection closed when the download failed.
    private func pump(_ handle: NIOFileHandle, from offset: Int64, of file: GrowingFile, head: HTTPRequestHead, context: ChannelHandlerContext) {
        // Whether it was done, read before its size: a size read after that is the whole form.
        let done = file.isFinished
        let written = (try? handle.withUnsafeFileDescriptor { fd -> Int64 in
            var status = stat()
            return fstat(fd, &status) == 0 ? Int64(status.st_size) : -1
        }) ?? -1
        // A form that arrives in slices (SlicedForm) is written in several places: only its whole prefix is sent.
        let size = file.cuts.isEmpty ? written : min(written, file.wholePrefix)
        guard !file.isFailed, size >= offset else { return stop(handle, context: context) }
        guard size > offset else {
            // An asker gone while the download pauses: its descriptor is not held on for it.
            guard context.channel.isActive else { return stop(handle, context: context) }
            guard done else {
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: Self.growingPoll) {
                    let (handler, context) = bound.value
                    handler.pump(handle, from: offset, of: file, head: head, context: context)
                }
                return
            }
            try? handle.close()
            sending = false
            return finish(head, context: context)
        }
        let end = min(size, offset + Self.chunk)
        pace(.fileRegion(FileRegion(fileHandle: handle, readerIndex: Int(offset), endIndex: Int(end))), context: context) { handler, context, sent in
            guard sent else { return handler.stop(handle, context: context) }
            handler.pump(handle, from: end, of: file, head: head, context: context)
        }
    }

    /// The stream broken off: the asker sees a body cut short, and asks again.
    private func stop(_ handle: NIOFileHandle, context: ChannelHandlerContext) {
        try? handle.close()
        sending = false
        context.close(promise: nil)
    }
}
