package import RouteSync
package import Transport

/// Everything a sync or a lookup needs to know about the places it works with.
package struct SyncSettings: Sendable {
    package var remote: Remote?
    /// Further remotes holding the same release, tried in order after `remote` (`--remote` repeated).
    package var mirrors: [Remote] = []
    package var cache: CacheLayout
    /// The channel this device follows (`--channel`), which its remotes carry too: kept here for
    /// what has no remote, an offline bundle's import above all.
    package var channel = ReleaseHead.defaultChannel
    package var preset: Preset
    package var transfer = TransferOptions()
    /// Generations kept, the current one included.
    package var keepGenerations = 2
    /// Seconds a path handed out stays valid after a switch (G2).
    package var grace: Double = 600
    /// Seconds a writer waits for another writer before it gives up (exit 5).
    package var lockTimeout: Double = 120
    /// A sync refuses to start below this much free space in the cache's filesystem (G5).
    package var minFreeBytes: Int64 = 16 << 20
    /// Seconds between two refreshes triggered by lookups.
    package var minRefetch: Double = 10
    /// Set with `--public-key`: tables must be signed (G8).
    package var tableVerifier: TableSignatureVerifier?
    /// Staged adoption and the compatibility gate (G10).
    package var rollout = RolloutSettings()
    /// Each table request carries the device's `Cenarius-Report` (fleet visibility); `--no-report` turns it off.
    package var report = true
    /// The report goes in the head poll's query string too, once per `FleetReport.queryWindow`
    /// (`--report-in query`): for CDN logs that keep no request headers.
    package var reportInQuery = false
    /// When a release is downloaded and when it is switched to (`serve`'s install policies).
    package var install = InstallPolicy()
    /// The store objects the remote holds, when it can say (an offline bundle: its folder's
    /// listing): forms it lacks are never planned (FormPlan). nil: a remote that may hold any.
    package var storeListing: Set<String>?
    /// LAN peers to take store objects from before the origin (`--peer`, docs/peers.md).
    package var peers = PeerSources()
    /// Told of each change a sync makes to the cache, before it is made (tests; a test hook).
    package var effects: SyncEffects?

    package init(remote: Remote?, cache: CacheLayout, preset: Preset) {
        self.remote = remote
        self.cache = cache
        self.preset = preset
    }

    /// The remote and its mirrors, in the order they are tried.
    package var remotes: [Remote] { remote.map { [$0] + mirrors } ?? [] }

    func requireRemotes() throws(CenariusError) -> [Remote] {
        guard remote != nil else { throw .usage("no remote configured: pass --remote URL or set CENARIUS_REMOTE") }
        return remotes
    }
}
