import ResourceCache
import RouteSync

/// What the daemon knows of its syncs, for `/health` and `status`: the last one's outcome, the
/// last success, and when the scheduler will sync next.
public struct SyncHistory: Sendable, Codable, Equatable {
    public struct Last: Sendable, Codable, Equatable {
        /// A `SyncReport.Outcome`, or `failed`.
        public var outcome: String
        public var reason: String
        public var at: Double
        public var generation: Int?
        /// On failure: the contract's exit code, its name and the message.
        public var error: Int32?
        public var desc: String?
        public var message: String?
    }

    public var last: Last?
    /// Seconds since 1970 of the last sync that reached the remote (also before this daemon
    /// started: the cache's `checked` mark).
    public var lastSuccessAt: Double?
    public var nextSyncAt: Double?

    mutating func record(_ result: Result<SyncReport, CenariusError>, reason: String, at: Double) {
        switch result {
        case .success(let report):
            last = Last(outcome: report.outcome.rawValue, reason: reason, at: at, generation: report.generation)
            lastSuccessAt = at
        case .failure(let error):
            last = Last(outcome: "failed", reason: reason, at: at, error: error.code.rawValue, desc: error.code.name, message: error.message)
        }
    }
}
