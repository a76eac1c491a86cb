import ResourceCache
import RouteSync

/// What the daemon knows of its syncs, for `/health` and `status`: the last one's outcome, the
/// last success, and when the scheduler will sync next.
package struct SyncHistory: Sendable, Codable, Equatable {
    package struct Last: Sendable, Codable, Equatable {
        /// A `SyncReport.Outcome`, `failed`, or `cancelled` (stopped by shutdown).
        package var outcome: String
        package var reason: String
        package var at: Double
        package var generation: Int?
        /// On failure: the contract's exit code, its name and the message.
        package var error: Int32?
        package var desc: String?
        package var message: String?
    }

    package var last: Last?
    /// Seconds since 1970 of the last sync that reached the remote (also before this daemon
    /// started: the cache's `checked` mark).
    package var lastSuccessAt: Double?
    package var nextSyncAt: Double?
    /// Files' bytes this daemon's syncs took from LAN peers and from the origin (docs/peers.md).
    package var bytesFromPeers: Int64?
    package var bytesFromOrigin: Int64?

    mutating func record(_ result: Result<SyncReport, CenariusError>, reason: String, at: Double) {
        switch result {
        case .success(let report):
            last = Last(outcome: report.outcome.rawValue, reason: reason, at: at, generation: report.generation)
            lastSuccessAt = at
            bytesFromPeers = (bytesFromPeers ?? 0) + report.bytesFromPeers
            bytesFromOrigin = (bytesFromOrigin ?? 0) + report.bytesFromOrigin
        case .failure(let error) where error.isCancelled:
            last = Last(outcome: "cancelled", reason: reason, at: at)
        case .failure(let error):
            last = Last(outcome: "failed", reason: reason, at: at, error: error.code.rawValue, desc: error.code.name, message: error.message)
        }
    }
}
