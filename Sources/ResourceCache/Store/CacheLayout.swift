package import RouteSync

/// Where everything lives inside the cache folder. The layout is private to cenariusd;
/// only the `generations/<n>/files/<uri>` paths are handed out, and they end in `/<uri>`.
///
///     lock                       flock(2) target: one writer at a time (G6)
///     objects/<h0h1>/<hash>      verified content, addressed by its route hash
///     tmp/                       downloads in flight; emptied by the next writer (G3)
///     generations/<n>/           one committed table: Routes.json, meta.json, files/<uri> (hard links)
///     generations/<n>.building/  a generation being assembled; never read
///     current -> generations/<n>   swapped by rename(2): the one atomic switch (G2)
///     checked                    its mtime: the last time the remote answered
///     attempted                  its mtime: the last time a sync started (throttles lookup refreshes)
///     release.json               the release state (G9, G10): the trial, the confirmed generation, the last
///                                rollback; the table held back, the releases given up, the app's holds
///     release.lock               flock(2) target for the short updates of release.json
///     preset-index               the preset's table sorted for binary search, before any sync
///     current.next               the link being made before it is renamed over `current`
///     gzip/<hash>.gz             the daemon's compressed copies, removed with their content by GC
///     device-id                  this device's id for rollouts when there is no /etc/machine-id
///     pending/                   a release adopted but not yet switched to (rollout windows)
///     daemon.lock, daemon.json   one daemon per cache; where it listens
///     import/<pid>-<n>/          a bundle file unpacked for `import`, removed when it ends (docs/bundles.md)
package struct CacheLayout: Sendable {
    package let root: String

    package init(root: String) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    package var lock: String { root + "/lock" }
    package var objects: String { root + "/objects" }
    package var tmp: String { root + "/tmp" }
    package var generations: String { root + "/generations" }
    package var current: String { root + "/current" }
    package var checked: String { root + "/checked" }
    package var attempted: String { root + "/attempted" }
    /// Where earlier versions kept the table held back, the releases given up and the holds; read
    /// into the release state and removed at its next write (ReleaseStore).
    package var heldBack: String { root + "/held-back" }
    package var failedReleases: String { root + "/failed-releases" }
    package var holds: String { root + "/holds.json" }
    package var releaseState: String { root + "/release.json" }
    package var releaseLock: String { root + "/release.lock" }
    package var presetIndex: String { root + "/preset-index" }
    package var currentNext: String { root + "/current.next" }
    package var compressed: String { root + "/gzip" }
    package var deviceID: String { root + "/device-id" }
    /// Keys rotated in and out (G8): trust that outlives the configuration's keys.
    package var trust: String { root + "/trust.json" }
    package var pending: String { root + "/pending" }
    /// The URL of the compressed table this device polls instead of the table (B8, SyncRun+Forms).
    package var tableForm: String { root + "/table-form" }
    /// The remote's head as last polled (HeadState): its validators and text.
    package var headState: String { root + "/head.json" }
    /// How the last sync ended (LastSync): what `why` answers from.
    package var lastSync: String { root + "/last-sync.json" }
    package var lastPoll: String { root + "/last-poll.json" }
    /// When the report last went in a poll's query string (`--report-in query`), unix seconds.
    package var reportQuery: String { root + "/report-query" }
    /// A stage's download under way (DownloadProgress), for `why` in another process.
    package var downloading: String { root + "/downloading.json" }
    package var daemonLock: String { root + "/daemon.lock" }
    /// Where imports before bundle files were read in place unpacked them; what a killed one left
    /// is removed by the next import (OpenedBundle).
    package var imports: String { root + "/import" }
    /// The bundles `serve --bundle-dir` took (their manifests' SHA-256, one a line): a restart does not take them again.
    package var bundlesTaken: String { root + "/bundles-taken" }
    package var daemonInfo: String { root + "/daemon.json" }
    /// The forms (compressed files, patches) a device with a peer listener fetched from the origin,
    /// kept by their store names for its LAN peers (PeerForms, docs/peers.md).
    package var peerForms: String { root + "/peer-forms" }

    package func object(_ hash: ContentHash) -> String {
        let hex = hash.hex
        return objects + "/" + hex.prefix(2) + "/" + hex
    }

    package func generation(_ number: Int) -> String { generations + "/\(number)" }
    package func building(_ number: Int) -> String { generations + "/\(number).building" }
}
