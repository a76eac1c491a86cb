import ResourceCache
import RouteSync
import Synchronization

/// What the HTTP side shares: current settings (swapped on SIGHUP), the parsed-table cache,
/// the coordinator and the metrics.
final class DaemonState: Sendable {
    private let current: Mutex<(settings: SyncSettings, link: String)>
    let develop: ServedFolder?
    let tables = TableCache()
    let coordinator: SyncCoordinator
    let metrics: DaemonMetrics
    let token: String?
    let info: DaemonInfo
    private let requestCounter = Atomic<Int>(0)
    let generation: CurrentGeneration
    let events: EventHub
    let releases: ReleaseSupervisor
    let rollout: RolloutWatch
    let writeGuard: WriteGuard
    /// `--health-max-age`: /health answers 503 when no sync reached the remote for this long.
    var healthMaxAge: Double? { options.healthMaxAge }
    var failWhenExpired: Bool { options.failWhenExpired }
    let options: DaemonOptions

    init(settings: SyncSettings, develop: ServedFolder?, coordinator: SyncCoordinator, generation: CurrentGeneration,
         metrics: DaemonMetrics, token: String?, info: DaemonInfo, events: EventHub, releases: ReleaseSupervisor, rollout: RolloutWatch,
         writeGuard: WriteGuard, options: DaemonOptions) {
        self.options = options
        self.rollout = rollout
        self.writeGuard = writeGuard
        self.generation = generation
        self.events = events
        self.releases = releases
        current = Mutex((settings, settings.cache.current))
        self.develop = develop
        self.coordinator = coordinator
        self.metrics = metrics
        self.token = token
        self.info = info
    }

    var settings: SyncSettings { current.withLock { $0.settings } }

    func replace(_ settings: SyncSettings) {
        current.withLock { $0 = (settings, settings.cache.current) }
        generation.changed()
    }

    func resolver() -> Resolver { Resolver(settings: settings, developFolder: develop, tables: tables) }

    /// The current generation's number, as `generation` last read it.
    func currentGeneration() -> Int? {
        generation.number(link: current.withLock { $0.link })
    }

    func nextRequestID() -> String {
        let n = requestCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(n, radix: 16)
    }
}
