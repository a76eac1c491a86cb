import FoundationEssentials
import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync

/// `POST /_cenarius/hold` and `DELETE /_cenarius/hold/<id>` (G10): while a hold is active, new
/// releases are downloaded but not switched to.
extension DaemonRouter {
    struct HoldReply: Encodable {
        var id: String
        var expires: Double
        var reason: String
    }

    struct ReleasedReply: Encodable {
        var id: String
        var released: Bool
    }

    func hold(_ body: ByteBuffer?) async throws(CenariusError) -> PreparedReply {
        guard state.develop == nil else { throw .usage("develop mode has no releases to hold") }
        let request = try ControlBody(body.map { Array($0.readableBytesView) }, example: "{\"ttl\": SECONDS, \"reason\": \"...\"}")
        let ttl = try request.seconds("ttl", in: HoldStore.ttlRange)
        let hold = try await state.rollout.addHold(ttl: ttl.value, reason: request.string("reason", maxBytes: HoldStore.maxReasonBytes) ?? "")
        return JSONBody.reply(HoldReply(id: hold.id, expires: hold.expires, reason: hold.reason), status: .created)
    }

    func release(hold id: String) async throws(CenariusError) -> PreparedReply {
        guard try await state.rollout.removeHold(id) else { throw .notFound("no active hold \(id)") }
        return JSONBody.reply(ReleasedReply(id: id, released: true))
    }
}
