import FoundationEssentials
import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync

/// Dispatches every request by hand: the control API under `/_cenarius/`, `/health`,
/// `/metrics`, and everything else as a uri through the lookup order. Raw request paths are
/// decoded and validated by the contract's uri rules, so nothing outside the served folders is
/// reachable whatever the encoding.
struct DaemonRouter: HTTPResponder {
    let state: DaemonState
    let files: FileServer

    /// A file of the current generation whose replies are prepared: answered on the event loop.
    func immediate(_ head: HTTPRequestHead) -> PreparedReply? {
        guard state.develop == nil, head.method == .GET || head.method == .HEAD else { return nil }
        // Only files are ever prepared, so a hit needs no check of the control paths.
        guard let generation = state.currentGeneration(),
              let file = files.prepared.get(generation: generation, target: head.uri),
              let reply = FileServer.choose(file, head) else { return nil }
        state.metrics.recordPreparedReply(source: file.source)
        return reply
    }

    func respond(_ head: HTTPRequestHead, body: ByteBuffer?) async -> PreparedReply {
        let started = ContinuousClock.now
        defer { state.metrics.recordRequest(since: started) }
        let id = state.nextRequestID()
        var head = head
        if let absolute = RequestTarget.absoluteForm(head.uri) {
            // The target's authority stands for `Host` (RFC 9112 §3.2.2).
            head.uri = absolute.originForm
            head.headers.replaceOrAdd(name: "host", value: absolute.authority)
        }
        let path = String(RequestTarget.path(of: head.uri))
        let method = head.method
        let control = path.hasPrefix("/_cenarius/")
        if (control || path == "/health"), !state.writeGuard.hostAllowed(head.headers) {
            // DNS rebinding: a page of another name that resolves to loopback reads nothing.
            let host = head.headers.first(name: "host") ?? ""
            return Envelope.reply(.usage("misdirected request: \(host) is not this daemon's host (serve --allow-origin names other hosts)").answering(421),
                                  id: id, action: DaemonRouter.action(for: path))
        }
        let verdict = control ? state.writeGuard.check(head.headers) : .sameOrigin
        if control && method == .OPTIONS { return PreparedReply(state.writeGuard.preflight(head.headers)) }
        // Writes, and answers that hand out local paths, only for the daemon's own pages and
        // clients that are no browser page (G9, G10: nobody else confirms or holds releases).
        if case .refused(let why) = verdict, method == .POST || method == .DELETE || path == "/_cenarius/resolve" {
            return Envelope.reply(.usage("forbidden: \(why)").answering(403), id: id, action: DaemonRouter.action(for: path))
        }
        guard control else { return await route(head, body: body, path: path, id: id).adding(WriteGuard.corsHeaders(verdict)) }
        return await traced(head, path: path) { await route(head, body: body, path: path, id: id).adding(WriteGuard.corsHeaders(verdict)) }
    }

    private func route(_ head: HTTPRequestHead, body: ByteBuffer?, path: String, id: String) async -> PreparedReply {
        let method = head.method
        do throws(CenariusError) {
            switch path {
            case "/health": return try await health(id: id, head.headers)
            case "/metrics": return metrics()
            case "/_cenarius/status": return try await status(head.headers)
            case "/_cenarius/why": return try await why(head)
            case "/_cenarius/resolve":
                guard let uri = RequestTarget.query(head.uri, "uri"), !uri.isEmpty else {
                    throw .usage("missing ?uri= parameter")
                }
                let resolution = try await lookup(uri)
                return JSONBody.reply(line: resolution.jsonText())
            case "/_cenarius/sync":
                guard method == .POST else { throw .usage("use POST to request a sync") }
                try authorize(head.headers)
                return JSONBody.reply(ReceiptReply(await state.coordinator.request()), status: .accepted)
            case "/_cenarius/switch":
                guard method == .POST else { throw .usage("use POST (with {\"force\": true} to override the switch windows and inhibit files) to switch to a staged release") }
                try authorize(head.headers)
                var force = false
                if let body, body.readableBytes > 0 {
                    force = try ControlBody(Array(body.readableBytesView), example: "{\"force\": true}").flag("force") ?? false
                }
                return JSONBody.reply(ReceiptReply(await state.coordinator.request(reason: "switch", switching: force ? .force : .request)), status: .accepted)
            case "/_cenarius/import":
                guard method == .POST else { throw .usage("use POST with {\"path\": \"/media/stick/app.cenarius.tar\"} to import a bundle") }
                try authorize(head.headers)
                guard let body, let path = try ControlBody(Array(body.readableBytesView), example: "{\"path\": \"/media/stick/app.cenarius.tar\"}").string("path", maxBytes: 4096),
                      path.hasPrefix("/") else { throw .usage("POST /_cenarius/import needs {\"path\": ABSOLUTE PATH} of a bundle") }
                return JSONBody.reply(ReceiptReply(await state.coordinator.requestImport(path)), status: .accepted)
            case "/_cenarius/ready":
                guard method == .POST else { throw .usage("use POST with {\"generation\": N} to confirm a generation") }
                try authorize(head.headers)
                return try await ready(body, id: id)
            case "/_cenarius/rollback":
                guard method == .POST else { throw .usage("use POST to roll back to the last confirmed generation") }
                try authorize(head.headers)
                return try await rollback(id: id)
            case "/_cenarius/events":
                return events(head)
            case "/_cenarius/hold":
                guard method == .POST else { throw .usage("use POST with {\"ttl\": SECONDS, \"reason\": \"...\"} to hold switches") }
                try authorize(head.headers)
                return try await hold(body)
            default:
                if path.hasPrefix("/_cenarius/sync/") {
                    let receiptID = String(path.dropFirst("/_cenarius/sync/".count))
                    guard let receipt = await state.coordinator.receipt(receiptID) else { throw .notFound("no sync request \(receiptID)") }
                    return JSONBody.reply(receipt)
                }
                if path.hasPrefix("/_cenarius/hold/") {
                    guard method == .DELETE else { throw .usage("use DELETE to release a hold") }
                    try authorize(head.headers)
                    return try await release(hold: String(path.dropFirst("/_cenarius/hold/".count)))
                }
                if path.hasPrefix("/_cenarius/") { throw .notFound("no control endpoint \(path)") }
                guard method == .GET || method == .HEAD else { throw .usage("\(method) is not supported on files; use GET or HEAD") }
                return try await file(String(path.dropFirst()), head: head)
            }
        } catch {
            return Envelope.reply(error, id: id, action: DaemonRouter.action(for: path))
        }
    }

    /// The resolver's daemon lookup (held copies first, the coordinator's refresh when nothing
    /// current is held), counted in the metrics.
    func lookup(_ raw: String) async throws(CenariusError) -> Resolution {
        let coordinator = state.coordinator
        // Stats and reads of the cache and preset run on the blocking pool, never on the shared
        // threads the scheduler and every other request use.
        let resolution = try await state.resolver().resolve(raw, blocking: { lookup throws(CenariusError) in try await blocking(lookup) }) {
            await coordinator.refreshForLookup()
        }
        state.metrics.recordLookup(resolution)
        return resolution
    }

    /// A file through the lookup: `/` and folder paths answer their `index.html`, a folder named
    /// without its slash is redirected to it, and `--fallback` answers other unknown paths that
    /// name no file (single-page apps' routes). A fresh answer from the current generation is
    /// prepared and kept, so the next request for it is answered by `immediate`.
    private func file(_ raw: String, head: HTTPRequestHead) async throws(CenariusError) -> PreparedReply {
        let folder = raw.isEmpty || raw.hasSuffix("/")
        do {
            return try await serve(RequestTarget.fileName(raw), key: "/" + raw, head: head)
        } catch {
            let name = raw.split(separator: "/").last ?? ""
            guard error.code == .notFound, !name.contains(".") else { throw error }
            if !folder, (try? await lookup(raw + "/index.html")) != nil {
                return PreparedReply(Reply(status: .movedPermanently, headers: [("Location", "/" + raw + "/"), ("Cache-Control", "no-cache")]))
            }
            guard let fallback = files.fallback else { throw error }
            return try await serve(fallback, key: nil, head: head)
        }
    }

    private func serve(_ raw: String, key: String?, head: HTTPRequestHead) async throws(CenariusError) -> PreparedReply {
        let store = GenerationStore(layout: state.settings.cache)
        let before = store.current()?.number
        let resolution = try await lookup(raw)
        let files = self.files
        let generation = state.develop == nil ? before ?? 0 : nil
        let file = try await blocking { () throws(CenariusError) in try files.prepare(resolution, generation: generation) }
        if let key, state.develop == nil, !resolution.stale, resolution.source == .cache || resolution.source == .preset,
           let before, store.current()?.number == before {
            files.prepared.put(generation: before, path: key, file)
        }
        return FileServer.reply(file, head)
    }

    private func metrics() -> PreparedReply {
        state.metrics.recordEventStreams(state.events.streams)
        let text = state.metrics.exposition(settings: state.settings)
        return PreparedReply(Reply(status: .ok, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                   body: .bytes(ByteBuffer(bytes: text))))
    }

    private func authorize(_ headers: HTTPHeaders) throws(CenariusError) {
        guard let token = state.token else { return }
        guard headers.first(name: "authorization") == "Bearer \(token)" else {
            throw CenariusError(.usage, "unauthorized: this daemon requires Authorization: Bearer <token> on POST", cause: .unauthorized).answering(401)
        }
    }

    static func action(for path: String) -> String {
        switch path {
        case "/health": "health"
        case "/metrics": "metrics"
        case "/_cenarius/status": "status"
        case "/_cenarius/why": "why"
        case "/_cenarius/resolve": "resolve"
        case "/_cenarius/ready": "ready"
        case "/_cenarius/events": "events"
        case "/_cenarius/rollback": "rollback"
        case "/_cenarius/switch": "switch"
        case "/_cenarius/import": "import"
        default:
            path.hasPrefix("/_cenarius/hold") ? "hold" : path.hasPrefix("/_cenarius/sync") ? "sync" : "file"
        }
    }
}

struct ReceiptReply: Encodable {
    var id: String
    var status: String
    init(_ receipt: SyncReceipt) {
        id = receipt.id
        status = receipt.status.rawValue
    }
}

struct StatusReply: Encodable {
    var cache: CacheStatus
    var daemon: DaemonInfo
    /// Whether switches go on trial (G9).
    var trials: Bool
    var eventStreams: Int
    /// The last sync's outcome (and error), the last success, the next scheduled sync.
    var sync: SyncHistory
    /// `why`'s answer for the newest release, as in `status --json` (docs/why.md).
    var why: WhyAnswer
}

/// What `cenariusd status` and `/_cenarius/status` say about the running daemon.
package struct DaemonInfo: Codable, Sendable {
    package var pid: Int32
    package var url: String
    package var startedAt: Double
    package var interval: Double
    package var develop: Bool
}
