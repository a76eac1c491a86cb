import RouteSync
/// How the client talks to an origin (G5, G7).
package struct TransferOptions: Sendable {
    /// Parallel connections per host (kept alive and reused; HTTP/2 streams when offered).
    package var connections = 16
    /// At most this many of them to one host (nil: `connections`): a device asking several LAN
    /// peers at once spreads its connections over them (docs/peers.md).
    package var hostConnections: Int?
    /// Download loops (threads, each with its own multi handle and share of the connections);
    /// nil: one per core, up to four, for downloads of 64 files or more.
    package var loops: Int?
    /// Seconds to connect, and seconds a transfer may stall below `lowSpeedBytes`/s before it is abandoned.
    package var timeout = 30
    package var lowSpeedBytes = 1
    /// Bodies larger than this are refused (G5).
    package var maxFileSize: Int64 = 256 << 20
    /// Attempts per file, including the first.
    package var attempts = 3
    /// Base and cap of the exponential backoff between attempts, seconds.
    package var backoffBase = 0.25
    package var backoffCap = 8.0
    /// Longest `Retry-After` honoured inside one run; a longer one fails the run (the daemon's scheduler waits it out).
    package var maxRetryAfter = 30.0
    package var userAgent = "cenariusd/\(CenariusVersion.string)"
    /// Attempts for a route table, signature or manifest; nil: `attempts`. The daemon makes one:
    /// its scheduler retries a failed poll on a schedule proportional to the interval, so an
    /// outage does not multiply the origin's load (B7).
    package var documentAttempts: Int?
    /// A PEM bundle of CAs to trust instead of the system's (`--cacert`).
    package var caFile: String?
    /// TLS client authentication (`--client-cert`, `--client-key`; the key may be in the certificate's file).
    package var clientCertificate: String?
    package var clientKey: String?
    /// Extra request headers ("Name: value"), sent only to `headerHosts`, never to a host a redirect leads to.
    package var headers: [String] = []
    /// host[:port], lowercased: the remotes' hosts.
    package var headerHosts: Set<String> = []
    /// Bytes per second across a run's transfers; 0: no cap.
    package var maxRate: Int64 = 0
    /// W3C Trace Context's header for every request of a traced sync (docs/telemetry.md): the
    /// origin's log line joins the device's trace. nil when no trace is recorded.
    package var traceparent: String?
    /// Transfers wait to learn whether a connection multiplexes (HTTP/2) before opening another:
    /// right for an origin, which may; not for a LAN peer, which speaks HTTP/1.1 only and would
    /// get every transfer queued behind one connection.
    package var waitsForMultiplexing = true
    /// Kept across runs by a daemon (TLS session resumption).
    package var sessions: TLSSessionCache?

    package init() {}
}

package enum CenariusVersion {
    package static let string = "0.1.0"
}
