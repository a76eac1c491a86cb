import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The daemon's HTTP/1.1 server, a service in the daemon's ServiceGroup. It is SwiftNIO with
/// one small handler (`HTTPConnection`) rather than a framework: B5 asks for nginx's request
/// rate, and a prepared file reply is written on the event loop without a task hop, a copy of
/// the headers, or a read of the file.
struct HTTPServer: Service {
    let host: String
    let port: Int
    let responder: any HTTPResponder
    let onListening: @Sendable (Int) -> Void
    /// Keep-alive connections idle this long are closed (nginx's default is 65 s).
    var idleTimeout: TimeAmount = .seconds(75)
    /// How long graceful shutdown waits for replies in flight.
    var drainTimeout: TimeAmount = .seconds(5)
    /// `--max-connections`; nil: no bound (the development origin).
    var limit: ConnectionLimit?

    struct BindError: Error, CustomStringConvertible {
        var description: String
    }

    func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let quiesce = ServerQuiescingHelper(group: group)
        let responder = self.responder
        let idleTimeout = self.idleTimeout
        let limit = self.limit
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 512)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(AcceptPause(limit: limit))
                        try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                    }
                }
                .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                // Room for a whole large file per sendfile call (the bench's 1 MiB: 0.87x nginx
                // with the kernel's default, ~1x with this); memory is only taken as it is used.
                .childChannelOption(ChannelOptions.socketOption(.so_sndbuf), value: 4 << 20)
                .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 4)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                        try pipeline.addHandler(HTTPConnection(responder: responder, idleTimeout: idleTimeout, slot: limit?.admit(channel)))
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            throw BindError(description: "\(error)")
        }
        onListening(channel.localAddress?.port ?? port)
        await withTaskCancellationOrGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onCancelOrGracefulShutdown: {
            quiesce.initiateShutdown(promise: nil)
        }
        // The listener is closed; replies in flight get a moment to finish.
        let loop = group.next()
        let drained = loop.makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: drained)
        // Whichever comes first: every connection closed, or the drain timeout (a second
        // completion of the promise is ignored).
        let timeout = loop.scheduleTask(in: drainTimeout) { drained.succeed() }
        try? await drained.futureResult.get()
        timeout.cancel()
    }
}
