import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync

/// `/health` and `/_cenarius/status`: what an operator needs, from what the daemon already
/// knows (no table is parsed per call), each with a validator so that a poller can ask
/// conditionally.
extension DaemonRouter {
    struct HealthReply: Encodable {
        /// `ok`, or why not: `no-table`, `stale`, `expired` (the signed table in force expired, G8).
        var status: String
        var generation: Int?
        var entries: Int
        var trial: Bool
        var sync: SyncHistory
        /// `--health-max-age`, when set.
        var maxAge: Double?
        /// When the signature of the table in force expires (unix seconds), if it does.
        var expires: Double?
    }

    /// 200 while a valid table is in force and (with `--health-max-age S`) a sync reached the
    /// remote within S seconds; 503 otherwise, with the same body saying why.
    func health(id: String, _ request: HTTPHeaders) async throws(CenariusError) -> PreparedReply {
        if let develop = state.develop {
            guard develop.realRoot != nil else { throw .notFound("develop folder \(develop.root) does not exist") }
            return JSONBody.reply(["status": "ok", "mode": "develop"])
        }
        let settings = state.settings
        let current = GenerationStore(layout: settings.cache).current()
        let entries = current.flatMap { try? state.tables.table(of: $0).count } ?? (try? state.tables.presetTable(settings.preset).count) ?? 0
        let history = await state.coordinator.history
        var reply = HealthReply(status: "ok", generation: current?.number, entries: entries,
                                trial: state.releases.view.current.state.trial != nil, sync: history, maxAge: state.healthMaxAge)
        if entries == 0 {
            reply.status = "no-table"
        } else if let maxAge = state.healthMaxAge, FileSystem.now() - (history.lastSuccessAt ?? 0) > maxAge {
            reply.status = "stale"
        }
        // A frozen mirror keeps a device on an expired table: it serves it, and says so.
        reply.expires = (try? current?.meta())??.signatureExpires.map(Double.init)
        if reply.status == "ok", let expires = reply.expires, expires <= settings.rollout.now() { reply.status = "expired" }
        let healthy = reply.status == "ok" || (reply.status == "expired" && !state.failWhenExpired)
        return JSONBody.validated(reply, status: healthy ? .ok : .serviceUnavailable, request: request)
    }

    func status(_ request: HTTPHeaders) async throws(CenariusError) -> PreparedReply {
        let release = state.releases.view.current
        let (settings, develop) = (state.settings, state.develop != nil)
        // `why` beside the cache's status, as `status --json` has it: a dashboard polling the
        // daemon reads the same answer (docs/why.md).
        let (cache, why) = try await blocking { () throws(CenariusError) in
            (try CacheStatus.read(settings), Why.read(settings, develop: develop, asked: nil))
        }
        let reply = StatusReply(cache: cache.timeless, daemon: state.info, trials: release.trialsEnabled,
                                eventStreams: state.events.streams, sync: await state.coordinator.history, why: why)
        return JSONBody.validated(reply, request: request)
    }
}

extension DaemonRouter {
    /// `GET /_cenarius/why[?release=NAME]`: what `cenariusd why --json` prints (docs/why.md).
    func why(_ head: HTTPRequestHead) async throws(CenariusError) -> PreparedReply {
        let (settings, develop) = (state.settings, state.develop != nil)
        let asked = RequestTarget.query(head.uri, "release").flatMap { $0.isEmpty ? nil : $0 }
        let answer = try await blocking { () throws(CenariusError) in Why.read(settings, develop: develop, asked: asked) }
        return JSONBody.validated(answer, request: head.headers)
    }
}

extension JSONBody {
    /// A JSON reply with a strong ETag of its bytes; 304 when the request already has them.
    static func validated(_ value: some Encodable, status: HTTPResponseStatus = .ok, request: HTTPHeaders) -> PreparedReply {
        let body = bytes(value)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body.readableBytesView {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let etag = "\"" + String(hash, radix: 16) + "\""
        var headers = [("Content-Type", "application/json"), ("Cache-Control", "no-cache"), ("ETag", etag)]
        if let match = request.first(name: "if-none-match"), Preconditions.matches(match, etag, weak: true) {
            headers.removeFirst()
            return PreparedReply(Reply(status: .notModified, headers: headers))
        }
        return PreparedReply(Reply(status: status, headers: headers, body: .bytes(body)))
    }
}
