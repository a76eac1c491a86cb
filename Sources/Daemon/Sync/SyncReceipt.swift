package import ResourceCache
import RouteSync

/// The answer to `POST /_cenarius/sync`, followed at `GET /_cenarius/sync/<id>`.
package struct SyncReceipt: Sendable, Codable, Equatable {
    package enum Status: String, Sendable, Codable {
        case requested = "REQUESTED"
        case running = "RUNNING"
        case succeed = "SUCCEED"
        case failed = "FAILED"
        /// Stopped by the daemon's shutdown (SIGTERM/SIGINT): not a failure of the remote.
        case cancelled = "CANCELLED"
    }

    package var id: String
    package var status: Status
    package var requestedAt: Double
    package var startedAt: Double?
    package var finishedAt: Double?
    /// What the sync did, once it has run.
    package var report: SyncReport?
    /// The contract's exit code and its stable name when the sync failed.
    package var error: Int32?
    package var desc: String?
    package var message: String?
    /// What started the sync: `start`, `schedule`, `request`, `lookup` or `signal`.
    package var reason: String?
    /// What became of the generation the sync committed (trial, confirmed, rolled back).
    package var release: ReleaseMark?
}
