import Daemon
import FoundationEssentials
import ResourceCache
import RouteSync
import Transport
import Settings

/// `cenariusd confirm` and `rollback` with a daemon serving the cache: the daemon's actor owns the
/// release state, so the command asks it (`POST /_cenarius/ready`, `/_cenarius/rollback`) rather
/// than writing the state beside it. `CENARIUS_TOKEN` is sent when the daemon requires one.
enum DaemonControl {
    /// What the daemon answers: a reply (`status`; `from`, `to`) or its error envelope.
    struct Answer: Decodable {
        var status: String?
        var from: Int?
        var to: Int?
        var error: Int32?
        var message: String?
        /// A sync's receipt (`POST /_cenarius/switch`, `GET /_cenarius/sync/ID`).
        var id: String?
        var report: SyncReport?
    }

    /// The daemon's answer, or its error envelope as the error it names.
    static func post(_ daemon: DaemonInfo, _ path: String, json: String?) throws(CenariusError) -> Answer {
        let reply = try ControlRequest.post(daemon.url + path, json: json, token: ProcessEnvironment()["CENARIUS_TOKEN"])
        let answer = try? JSONDecoder().decode(Answer.self, from: Data(reply.body))
        guard (200..<300).contains(reply.status), let answer else {
            let code = answer?.error.flatMap { CenariusError.Code(rawValue: $0) } ?? .internal
            throw CenariusError(code, answer?.message ?? "the daemon at \(daemon.url) answered \(reply.status) to \(path)")
        }
        return answer
    }

    /// The daemon's sync (a switch, an import: anything it answers with a sync's receipt) once it
    /// has ended: its report, or its error with the error's own exit code.
    static func waitForSync(_ id: String, daemon: DaemonInfo, what: String) async throws -> SyncReport {
        for _ in 0..<6000 {
            let receipt = try post(daemon, "/_cenarius/sync/\(id)", json: nil)
            if receipt.status == "FAILED" || receipt.status == "CANCELLED" {
                let code = receipt.error.flatMap(CenariusError.Code.init(rawValue:)) ?? .remote
                throw CenariusError(code, receipt.message ?? "the daemon's \(what) \(id) \(receipt.status?.lowercased() ?? "failed")")
            }
            if let report = receipt.report, receipt.status != "REQUESTED", receipt.status != "RUNNING" { return report }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CenariusError.remote("the daemon's \(what) \(id) did not end within 10 minutes")
    }
}
