/// How the client talks to an origin (G5, G7).
public struct TransferOptions: Sendable {
    /// Parallel connections per host (kept alive and reused; HTTP/2 streams when offered).
    public var connections = 16
    /// Download loops (threads, each with its own multi handle and share of the connections);
    /// nil: one per core, up to four, for downloads of 64 files or more.
    public var loops: Int?
    /// Seconds to connect, and seconds a transfer may stall below `lowSpeedBytes`/s before it is abandoned.
    public var timeout = 30
    public var lowSpeedBytes = 1
    /// Bodies larger than this are refused (G5).
    public var maxFileSize: Int64 = 256 << 20
    /// Attempts per file, including the first.
    public var attempts = 3
    /// Base and cap of the exponential backoff between attempts, seconds.
    public var backoffBase = 0.25
    public var backoffCap = 8.0
    /// Longest `Retry-After` honoured inside one run; a longer one fails the run (the daemon's scheduler waits it out).
    public var maxRetryAfter = 30.0
    public var userAgent = "cenariusd/\(CenariusVersion.string)"

    public init() {}
}

public enum CenariusVersion {
    public static let string = "0.1.0"
}
