import Foundation
import Hummingbird
import ResourceCache
import RouteSync
import Synchronization

/// Dispatches every request by hand: the control API under `/_cenarius/`, `/health`,
/// `/metrics`, and everything else as a uri through the lookup order. Raw request paths are
/// decoded and validated by the contract's uri rules, so nothing outside the served folders is
/// reachable whatever the encoding.
struct DaemonRouter: Sendable {
    let state: DaemonState
    let files: FileServer

    func respond(_ request: Request, context: some RequestContext) async -> Response {
        let started = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - started
            state.metrics.recordRequest(nanoseconds: elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        }
        let id = state.nextRequestID()
        let target = request.head.path ?? "/"
        let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        let method = request.method
        do throws(CenariusError) {
            switch path {
            case "/health": return try await health(id: id)
            case "/metrics": return metrics()
            case "/_cenarius/status": return try status()
            case "/_cenarius/resolve":
                guard let uri = request.uri.queryParameters["uri"].map(String.init), !uri.isEmpty else {
                    throw .usage("missing ?uri= parameter")
                }
                let resolution = try await lookup(uri)
                return JSONBody.response(resolution)
            case "/_cenarius/sync":
                guard method == .post else { throw .usage("use POST to request a sync") }
                try authorize(request)
                return JSONBody.response(ReceiptReply(await state.coordinator.request()), status: .accepted)
            default:
                if path.hasPrefix("/_cenarius/sync/") {
                    let receiptID = String(path.dropFirst("/_cenarius/sync/".count))
                    guard let receipt = await state.coordinator.receipt(receiptID) else { throw .notFound("no sync request \(receiptID)") }
                    return JSONBody.response(receipt)
                }
                if path.hasPrefix("/_cenarius/") { throw .notFound("no control endpoint \(path)") }
                guard method == .get || method == .head else { throw .usage("\(method) is not supported on files; use GET or HEAD") }
                return try await file(String(path.dropFirst()), request: request, context: context)
            }
        } catch {
            let status: HTTPResponse.Status? = error.message.hasPrefix("unauthorized") ? .unauthorized : nil
            return Envelope.response(error, id: id, action: DaemonRouter.action(for: path), status: status)
        }
    }

    /// Lookup without blocking: answer from what is held; if nothing current is held, ask the
    /// coordinator for a refresh (single-flight, throttled) and look again.
    func lookup(_ raw: String) async throws(CenariusError) -> Resolution {
        let resolver = state.resolver()
        var firstError: CenariusError?
        do {
            let resolution = try resolver.resolve(raw, options: .init(offline: true))
            if !resolution.stale {
                state.metrics.recordLookup(resolution)
                return resolution
            }
        } catch {
            let nothingSynced = GenerationStore(layout: resolver.settings.cache).current() == nil
            if error.code == .notFound && !nothingSynced { throw error }
            if resolver.developFolder != nil || error.code == .usage || error.code == .integrity { throw error }
            firstError = error
        }
        guard resolver.developFolder == nil, resolver.settings.remote != nil else {
            throw firstError ?? .remote("no current copy of \(raw) and no remote configured")
        }
        let refreshError = await state.coordinator.refreshForLookup()
        var resolution: Resolution
        do {
            resolution = try resolver.resolve(raw, options: .init(offline: true))
        } catch {
            throw refreshError.map { CenariusError($0.code, "\(error.message); refresh failed: \($0.message)") } ?? error
        }
        if !resolution.stale && resolution.source == .cache {
            // Became current through the refresh.
            resolution.source = .remote
        }
        state.metrics.recordLookup(resolution)
        return resolution
    }

    private func file(_ raw: String, request: Request, context: some RequestContext) async throws(CenariusError) -> Response {
        let resolution = try await lookup(raw)
        do {
            return try await files.respond(resolution, request: request, context: context)
        } catch let error as CenariusError {
            throw error
        } catch {
            throw .storage("cannot serve \(resolution.uri): \(error)")
        }
    }

    private func health(id: String) async throws(CenariusError) -> Response {
        let settings = state.settings
        if let develop = state.develop {
            guard develop.realRoot != nil else { throw .notFound("develop folder \(develop.root) does not exist") }
            return JSONBody.response(["status": "ok", "mode": "develop"])
        }
        let store = GenerationStore(layout: settings.cache)
        let entries: Int
        if let current = store.current() {
            entries = try current.table().count
        } else {
            entries = (try? settings.preset.table().count) ?? 0
        }
        guard entries > 0 else {
            return Envelope.response(.remote("no valid route table in force yet"), id: id, action: "health", status: .serviceUnavailable)
        }
        return JSONBody.response(HealthReply(status: "ok", generation: store.current()?.number, entries: entries))
    }

    private func metrics() -> Response {
        let text = state.metrics.exposition(settings: state.settings)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        headers[.contentLength] = String(text.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: text)))
    }

    private func status() throws(CenariusError) -> Response {
        JSONBody.response(StatusReply(cache: try CacheStatus.read(state.settings), daemon: state.info))
    }

    private func authorize(_ request: Request) throws(CenariusError) {
        guard let token = state.token else { return }
        guard request.headers[.authorization] == "Bearer \(token)" else {
            throw .usage("unauthorized: this daemon requires Authorization: Bearer <token> on POST")
        }
    }

    static func action(for path: String) -> String {
        switch path {
        case "/health": "health"
        case "/metrics": "metrics"
        case "/_cenarius/status": "status"
        case "/_cenarius/resolve": "resolve"
        default: path.hasPrefix("/_cenarius/sync") ? "sync" : "file"
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

struct HealthReply: Encodable {
    var status: String
    var generation: Int?
    var entries: Int
}

struct StatusReply: Encodable {
    var cache: CacheStatus
    var daemon: DaemonInfo
}

/// What `cenariusd status` and `/_cenarius/status` say about the running daemon.
public struct DaemonInfo: Codable, Sendable {
    public var pid: Int32
    public var url: String
    public var startedAt: Double
    public var interval: Double
    public var develop: Bool
}
