import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Stops accepting for a moment when accept(2) fails for want of descriptors or memory.
///
/// NIO's ServerSocketChannel keeps its read pending after a failed accept, so the listener stays
/// registered, the level-triggered epoll reports it readable again at once, and the next accept
/// fails the same way: an event loop at full CPU for as long as the descriptors are gone (its
/// AcceptBackoffHandler only delays new read requests, and none is made). Turning autoRead off
/// unregisters the listener; it is turned on again after `pause`. Pending connections wait in
/// the kernel's backlog meanwhile (G5: nothing spins when descriptors run out).
final class AcceptPause: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let pause: TimeAmount
    private let limit: ConnectionLimit?
    private var paused = false

    init(pause: TimeAmount = .milliseconds(500), limit: ConnectionLimit?) {
        self.pause = pause
        self.limit = limit
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode), !paused {
            paused = true
            limit?.shed(16)
            let channel = context.channel
            channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: pause) {
                bound.value.paused = false
                channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
            }
        }
        context.fireErrorCaught(error)
    }
}
