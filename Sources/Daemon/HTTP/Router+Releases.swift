import FoundationEssentials
import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync
import Transport

/// The release endpoints: `POST /_cenarius/ready` confirms the generation a page was loaded
/// from (G9), `GET /_cenarius/events` streams what happens to releases.
extension DaemonRouter {
    struct ReadyRequest {
        var generation: Int
    }

    struct ReadyReply: Encodable {
        var generation: Int
        /// `confirmed` (this call ended the trial) or `already-confirmed`.
        var status: String
    }

    func ready(_ body: ByteBuffer?, id: String) async throws(CenariusError) -> PreparedReply {
        guard state.develop == nil else { throw .usage("develop mode has no releases to confirm") }
        let body = try ControlBody(body.map { Array($0.readableBytesView) },
                                   example: "{\"generation\": N}: the generation the page was loaded from (its X-Cenarius-Generation)")
        let request = ReadyRequest(generation: try body.whole("generation", in: 0...Int(Int32.max)))
        switch await state.releases.confirm(request.generation) {
        case .confirmed:
            return JSONBody.reply(ReadyReply(generation: request.generation, status: "confirmed"))
        case .alreadyConfirmed:
            return JSONBody.reply(ReadyReply(generation: request.generation, status: "already-confirmed"))
        case .conflict(let onTrial, let current):
            let now = onTrial.map { "generation \($0) is on trial" } ?? "generation \(current ?? 0) is current and confirmed"
            let error = CenariusError.notFound("generation \(request.generation) is not on trial: \(now); reload the page to confirm what it now serves")
            return Envelope.reply(error.answering(409), id: id, action: "ready")
        case .busy(let from, let to):
            let error = CenariusError.notFound("generation \(request.generation) cannot be confirmed now: generation \(from) is being rolled back to \(to.map(String.init) ?? "the preset")")
            return Envelope.reply(error.answering(409), id: id, action: "ready")
        }
    }

    struct RollbackReply: Encodable {
        var from: Int
        /// nil: the preset is in force again.
        var to: Int?
    }

    /// `POST /_cenarius/rollback` (what `cenariusd rollback` asks a running daemon): an operator's
    /// rollback to the last confirmed generation, answered once the switch is made. 409 while a
    /// hold is active or another switch is under way.
    func rollback(id: String) async throws(CenariusError) -> PreparedReply {
        guard state.develop == nil else { throw .usage("develop mode has no releases to roll back") }
        do {
            let result = try await state.releases.rollback()
            return JSONBody.reply(RollbackReply(from: result.from, to: result.to))
        } catch where error.code == .usage {
            return Envelope.reply(error.answering(409), id: id, action: "rollback")
        }
    }

    func events(_ head: HTTPRequestHead) -> PreparedReply {
        let last = head.headers.first(name: "last-event-id").flatMap { Int($0.trimmingCharacters(in: " ")) }
        return PreparedReply(Reply(status: .ok, headers: [
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("Transfer-Encoding", "chunked"),
            // A reverse proxy in front of the daemon must pass each event on as it comes.
            ("X-Accel-Buffering", "no"),
        ], body: .events(EventStream(hub: state.events, lastEventID: last))))
    }
}
