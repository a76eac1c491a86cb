import FoundationEssentials
import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync

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
        switch try await state.releases.confirm(request.generation) {
        case .confirmed:
            return JSONBody.reply(ReadyReply(generation: request.generation, status: "confirmed"))
        case .alreadyConfirmed:
            return JSONBody.reply(ReadyReply(generation: request.generation, status: "already-confirmed"))
        case .conflict(let onTrial, let current):
            let now = onTrial.map { "generation \($0) is on trial" } ?? "generation \(current ?? 0) is current and confirmed"
            let error = CenariusError.notFound("generation \(request.generation) is not on trial: \(now); reload the page to confirm what it now serves")
            return Envelope.reply(error, id: id, action: "ready", status: .conflict)
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
