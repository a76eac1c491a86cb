import Logging
import ReportHeader
import ResourceCache
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's parts, wired together: the shared state, the router, the sync coordinator with
/// what happens after each sync, the release supervisor and the rollout watch. `Daemon.run`
/// serves and runs them as services; `DaemonRouterTests` drives the router itself, no socket.
/// Nothing starts here: timers and the first sync are the caller's.
struct DaemonParts {
    let state: DaemonState
    let router: DaemonRouter
    let coordinator: SyncCoordinator
    let releases: ReleaseSupervisor
    let rollout: RolloutWatch
    /// Events pushed to `--report-url`, when set (and not in develop mode).
    let reports: ReportService?
    let info: DaemonInfo

    init(settings: SyncSettings, develop: ServedFolder?, options: DaemonOptions, holder: SettingsHolder, logger: Logger, discovered: PeerDirectory? = nil) {
        let metrics = DaemonMetrics()
        let layout = settings.cache
        let generation = CurrentGeneration()
        let events = EventHub()
        // Before anything can publish: the start's own events are reported too.
        reports = develop == nil ? options.reportURL.map { url in
            ReportService(url: url, settings: holder, queuePath: layout.root + "/report-queue",
                          deviceHash: FleetReport.deviceHash(settings.rollout.device(layout: layout).id), events: events, logger: logger)
        } : nil
        let releases = ReleaseSupervisor(settings: settings, options: options.trial, events: events, metrics: metrics,
                                         logger: logger, switched: generation.changed)
        let view = releases.view
        let watch = RolloutWatch(settings: holder, events: events, logger: logger)
        let expiry = ExpiryWatch(settings: holder, events: events, logger: logger)
        let coordinator = SyncCoordinator(
            settings: settings, logger: logger, metrics: metrics,
            onStart: { reason in await releases.syncStarted(reason: reason) },
            onFinish: { finished in
                generation.changed()
                // A commit is taken in by the release state whatever the sync's outcome says.
                await releases.syncEnded()
                expiry.check()
                SystemdNotifier.notify("STATUS=" + SystemdNotifier.status(finished.result))
                switch finished.result {
                case .success(let report):
                    await watch.afterSync(report)
                case .failure(let error) where error.isCancelled:
                    logger.debug("no sync-failed event: the sync was cancelled by shutdown")
                case .failure(let error):
                    events.publish("sync-failed", generation: GenerationStore(layout: layout).current()?.number, [
                        "error": .int(Int(error.code.rawValue)), "desc": .string(error.code.name), "message": .string(error.message),
                        "reason": .string(finished.reason),
                        "why": .string(Why.failureReason(LastSync(at: FileSystem.now(), outcome: nil, error: error)).rawValue),
                    ])
                }
            },
            releaseMark: { view.mark(for: $0) }, discovered: discovered)
        let info = DaemonInfo(pid: getpid(), url: "http://\(options.bind):\(options.port)", startedAt: FileSystem.now(),
                              interval: options.interval, develop: develop != nil)
        let state = DaemonState(settings: settings, develop: develop, coordinator: coordinator, generation: generation,
                                metrics: metrics, token: options.token, info: info, events: events, releases: releases, rollout: watch,
                                writeGuard: WriteGuard(allowed: Set(options.allowOrigins), bind: options.bind), options: options)
        router = DaemonRouter(state: state, files: FileServer(
            memory: ContentCache(budget: options.memoryBudget, maxEntry: 64 << 10),
            gzipFolder: develop == nil ? layout.compressed : nil,
            prepared: PreparedFiles(budget: options.memoryBudget), immutable: options.immutable, fallback: options.fallback))
        self.state = state
        self.coordinator = coordinator
        self.releases = releases
        self.rollout = watch
        self.info = info
    }
}
