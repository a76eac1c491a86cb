import Hummingbird
import Logging
import NIOCore

/// `cenariusd origin DIR`: a static server for a remote folder, with ETag/304 and Range,
/// for publishers trying a site locally and as the built-in default remote of `make run`.
public struct Origin: Sendable {
    public let root: String
    public let host: String
    public let port: Int

    public init(root: String, host: String = "127.0.0.1", port: Int = 8701) {
        self.root = root
        self.host = host
        self.port = port
    }

    /// Runs until SIGTERM/SIGINT. `onListening` receives the bound port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        var logger = Logger(label: "cenariusd.origin")
        logger.logLevel = .warning
        let router = Router()
        router.middlewares.add(FileMiddleware(root, cacheControl: .init([(MediaType(type: .any), [.noCache])]), searchForIndexHtml: true, logger: logger))
        router.get("/health") { _, _ in "ok" }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "cenariusd-origin"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        try await app.runService()
    }
}
