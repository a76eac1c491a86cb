import RouteSync

/// Everything a sync or a lookup needs to know about the places it works with.
public struct SyncSettings: Sendable {
    public var remote: Remote?
    /// Further remotes holding the same release, tried in order after `remote` (`--remote` repeated).
    public var mirrors: [Remote] = []
    public var cache: CacheLayout
    public var preset: Preset
    public var transfer = TransferOptions()
    /// Generations kept, the current one included.
    public var keepGenerations = 2
    /// Seconds a path handed out stays valid after a switch (G2).
    public var grace: Double = 600
    /// Seconds a writer waits for another writer before it gives up (exit 5).
    public var lockTimeout: Double = 120
    /// A sync refuses to start below this much free space in the cache's filesystem (G5).
    public var minFreeBytes: Int64 = 16 << 20
    /// Seconds between two refreshes triggered by lookups.
    public var minRefetch: Double = 10
    /// Set with `--public-key`: tables must be signed (G8).
    public var tableVerifier: TableSignatureVerifier?
    /// Staged adoption and the compatibility gate (G10).
    public var rollout = RolloutSettings()

    public init(remote: Remote?, cache: CacheLayout, preset: Preset) {
        self.remote = remote
        self.cache = cache
        self.preset = preset
    }

    /// The remote and its mirrors, in the order they are tried.
    public var remotes: [Remote] { remote.map { [$0] + mirrors } ?? [] }

    func requireRemotes() throws(CenariusError) -> [Remote] {
        guard remote != nil else { throw .usage("no remote configured: pass --remote URL or set CENARIUS_REMOTE") }
        return remotes
    }
}
