import ResourceCache
import RouteSync
import Transport

/// How a daemon's downloads differ from a one-shot command's.
enum DaemonTransport {
    static func prepare(_ settings: SyncSettings, sessions: TLSSessionCache?) -> SyncSettings {
        var settings = settings
        // One TLS session cache for the daemon's life: an unchanged poll resumes the last
        // session instead of a full handshake (B7).
        settings.transfer.sessions = sessions
        // A failed table request is retried by the scheduler, on a backoff proportional to the
        // interval, rather than at once: quick retries by a whole fleet multiply an outage's load.
        settings.transfer.documentAttempts = 1
        return settings
    }
}
