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
    /// Attempts for a route table, signature or manifest; nil: `attempts`. The daemon makes one:
    /// its scheduler retries a failed poll on a schedule proportional to the interval, so an
    /// outage does not multiply the origin's load (B7).
    public var documentAttempts: Int?
    /// A PEM bundle of CAs to trust instead of the system's (`--cacert`).
    public var caFile: String?
    /// TLS client authentication (`--client-cert`, `--client-key`; the key may be in the certificate's file).
    public var clientCertificate: String?
    public var clientKey: String?
    /// Extra request headers ("Name: value"), sent only to `headerHosts`, never to a host a redirect leads to.
    public var headers: [String] = []
    /// host[:port], lowercased: the remotes' hosts.
    public var headerHosts: Set<String> = []
    /// Bytes per second across a run's transfers; 0: no cap.
    public var maxRate: Int64 = 0
    /// Kept across runs by a daemon (TLS session resumption).
    public var sessions: TLSSessionCache?

    public init() {}
}

public enum CenariusVersion {
    public static let string = "0.1.0"
}
