import Logging
import NIOCore
import NIOHTTP1
import ResourceCache
package import RouteSync
import ServiceLifecycle
import UnixSignals

/// `cenariusd origin DIR`: a static server for a remote folder, with ETag/304 and Range,
/// for publishers trying a site locally and as the built-in default remote of `make run`.
/// It is the daemon's own HTTP server and file replies with a plain folder behind them, so
/// the one binary needs no second HTTP stack (a framework brought Foundation and ICU with it).
package struct Origin: Sendable {
    package let root: String
    package let host: String
    package let port: Int

    package init(root: String, host: String = "127.0.0.1", port: Int = 8701) {
        self.root = root
        self.host = host
        self.port = port
    }

    /// Runs until SIGTERM/SIGINT. `onListening` receives the bound port (useful with port 0).
    package func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws(CenariusError) {
        var logger = Logger(label: "cenariusd.origin")
        logger.logLevel = .warning
        let files = FileServer(memory: ContentCache(budget: 16 << 20, maxEntry: 64 << 10), gzipFolder: nil,
                               prepared: PreparedFiles(budget: 0), describesSource: false)
        let server = HTTPServer(host: host, port: port, responder: OriginResponder(folder: ServedFolder(root: root), files: files),
                                onListening: onListening)
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            throw .storage("cannot serve on \(host):\(port): \(error)")
        }
    }
}

/// Every GET or HEAD is a file of the folder (`/` and folder paths answer their `index.html`);
/// `/health` says ok. Paths are decoded and checked by the contract's uri rules, as the daemon's
/// are, so nothing outside the folder is reachable.
struct OriginResponder: HTTPResponder {
    let folder: ServedFolder
    let files: FileServer

    func immediate(_ head: HTTPRequestHead) -> PreparedReply? { nil }

    func respond(_ head: HTTPRequestHead, body: ByteBuffer?) async -> PreparedReply {
        let path = RequestTarget.path(of: head.uri)
        guard head.method == .GET || head.method == .HEAD else {
            return PreparedReply(Reply(status: .methodNotAllowed, headers: [("Allow", "GET, HEAD")]))
        }
        if path == "/health" { return PreparedReply(Reply(status: .ok, body: .bytes(ByteBuffer(string: "ok")))) }
        var raw = String(path.dropFirst())
        if raw.isEmpty || raw.hasSuffix("/") { raw += "index.html" }
        do throws(CenariusError) {
            let uri = try URIPath(lookup: raw)
            let index = try URIPath(lookup: raw + "/index.html")
            guard let file = folder.file(uri) ?? folder.file(index) else { throw .notFound("\(uri) is not in \(folder.root)") }
            let resolution = Resolution(uri: uri.value, path: file, source: .develop, hash: nil, stale: false)
            return FileServer.reply(try files.prepare(resolution, generation: nil), head)
        } catch {
            let status: HTTPResponseStatus = error.code == .notFound ? .notFound : .internalServerError
            return PreparedReply(Reply(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                       body: .bytes(ByteBuffer(string: error.message + "\n"))))
        }
    }
}
