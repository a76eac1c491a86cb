import ResourceCache
import RouteSync

/// The answer to `POST /_cenarius/sync`, followed at `GET /_cenarius/sync/<id>`.
public struct SyncReceipt: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable {
        case requested = "REQUESTED"
        case running = "RUNNING"
        case succeed = "SUCCEED"
        case failed = "FAILED"
    }

    public var id: String
    public var status: Status
    public var requestedAt: Double
    public var startedAt: Double?
    public var finishedAt: Double?
    /// What the sync did, once it has run.
    public var report: SyncReport?
    /// The contract's exit code and its stable name when the sync failed.
    public var error: Int32?
    public var desc: String?
    public var message: String?
    /// What started the sync: `start`, `schedule`, `request`, `lookup` or `signal`.
    public var reason: String?
    /// What became of the generation the sync committed (trial, confirmed, rolled back).
    public var release: ReleaseMark?
}
