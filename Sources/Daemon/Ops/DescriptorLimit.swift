#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open descriptors. systemd starts services with a soft limit of 1024 and
/// a much higher hard one, expecting a server to raise its own: the daemon does at start, so that
/// connections, libcurl's sockets and the files it serves share a limit that is not its weakest.
enum DescriptorLimit {
    /// Raises the soft limit to the hard one; (before, after).
    static func raiseSoftLimit() -> (before: Int, after: Int) {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return (1024, 1024) }
        let before = Int(clamping: limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        guard setrlimit(resource, &raised) == 0 else { return (before, before) }
        return (before, Int(clamping: raised.rlim_cur))
    }

    /// `--max-connections` by default: half the descriptors, at most 1024 (a loopback daemon's
    /// clients are a few browsers and apps; the rest is for libcurl, files and the cache).
    static func defaultMaxConnections(limit: Int) -> Int {
        max(16, min(1024, limit / 2))
    }

    private static var resource: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
