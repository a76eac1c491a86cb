package import ResourceCache
import Synchronization
package import Telemetry

/// What SIGHUP re-reads: every setting of the table but those read once at start (the cache
/// folder, which the daemon's lock is on; develop mode; `--report-url`).
package struct ReloadableSettings: Sendable {
    package var sync: SyncSettings
    package var trial: TrialOptions
    /// Where traces go (docs/telemetry.md); applied by `serve`'s reload itself.
    package var trace: TraceSettings?
    /// Where the daemon's metrics go over OTLP; applied by `serve`'s reload too.
    package var metrics: MetricSettings?
    /// Settings read once at start whose value the reload found changed: said in the log, kept.
    package var unchanged: [String] = []

    package init(sync: SyncSettings, trial: TrialOptions, trace: TraceSettings? = nil, metrics: MetricSettings? = nil, unchanged: [String] = []) {
        self.sync = sync
        self.trial = trial
        self.trace = trace
        self.metrics = metrics
        self.unchanged = unchanged
    }
}

/// The daemon's one copy of its reloadable settings. Parts that only read settings read them
/// here at each use, so none keeps a start-up copy past a SIGHUP; parts with state made from
/// them (the release machine's trial policy, the coordinator's next sync, the request path's
/// tables) are told by the reload as well (`SignalService`).
package final class SettingsHolder: Sendable {
    private let value: Mutex<ReloadableSettings>

    package init(_ settings: ReloadableSettings) {
        value = Mutex(settings)
    }

    package var current: ReloadableSettings { value.withLock { $0 } }

    func replace(_ settings: ReloadableSettings) {
        value.withLock { $0 = settings }
    }
}
