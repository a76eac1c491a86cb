import ResourceCache
import RouteSync
import Synchronization

/// What the HTTP side shares: current settings (swapped on SIGHUP), the parsed-table cache,
/// the coordinator and the metrics.
final class DaemonState: Sendable {
    private let current: Mutex<SyncSettings>
    let develop: ServedFolder?
    let tables = TableCache()
    let coordinator: SyncCoordinator
    let metrics: DaemonMetrics
    let token: String?
    let info: DaemonInfo
    private let requestCounter = Atomic<Int>(0)

    init(settings: SyncSettings, develop: ServedFolder?, coordinator: SyncCoordinator, metrics: DaemonMetrics, token: String?, info: DaemonInfo) {
        current = Mutex(settings)
        self.develop = develop
        self.coordinator = coordinator
        self.metrics = metrics
        self.token = token
        self.info = info
    }

    var settings: SyncSettings { current.withLock { $0 } }

    func replace(_ settings: SyncSettings) { current.withLock { $0 = settings } }

    func resolver() -> Resolver { Resolver(settings: settings, developFolder: develop, tables: tables) }

    func nextRequestID() -> String {
        let n = requestCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(n, radix: 16)
    }
}
