import ReportHeader
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
package import Logging
package import ResourceCache
package import RouteSync
import Transport
package import Telemetry
import ServiceLifecycle
import UnixSignals

/// How `cenariusd serve` runs.
package struct DaemonOptions: Sendable {
    package var bind = "127.0.0.1"
    package var port = 8700
    /// Seconds between periodic syncs.
    package var interval: Double = 300
    /// The first sync waits a random moment within this many seconds when a table is already in
    /// force (a fleet that reboots together does not poll together); nil: min(interval, 60).
    package var startJitter: Double?
    /// Bearer token required on POSTs (and required at all for a non-loopback bind).
    package var token: String?
    package var jsonLogs = false
    package var logLevel: Logger.Level = .info
    /// Bytes of small file bodies kept in memory.
    package var memoryBudget = 64 << 20
    /// Trials, health checks and the switch hook (G9).
    package var trial = TrialOptions()
    /// Origins whose pages may use the control API besides the daemon's own (`--allow-origin`).
    package var allowOrigins: [String] = []
    /// `--health-max-age`: seconds without a sync reaching the remote before /health says 503.
    package var healthMaxAge: Double?
    /// `--fail-when-expired`: /health says 503 while the signed table in force has expired (G8).
    package var failWhenExpired = false
    /// `--immutable` globs and the `--fallback` uri of the file server.
    package var immutable: [String] = []
    package var fallback: String?
    /// `--report-url`: where the daemon's events are posted as CloudEvents (ReportService).
    package var reportURL: String?
    /// `--max-connections`; nil: `DescriptorLimit.defaultMaxConnections` of the raised limit.
    package var maxConnections: Int?
    /// `--bundle-dir`: folders watched for offline bundles (BundleWatch).
    package var bundleDirs: [String] = []
    /// `--peer-listen` and its caps: the LAN's listener (PeerListener); nil: none.
    package var peers: PeerServeOptions?
    /// `--peer-discovery`: find peers by DNS-SD (and announce `peers`, when there is a listener).
    package var peerDiscovery = false

    package init() {}
}

/// The daemon: an HTTP server and the sync scheduler as two services in one ServiceGroup,
/// SIGTERM/SIGINT for graceful shutdown, SIGHUP to reload and sync.
package enum Daemon {
    package static func run(
        settings: SyncSettings, develop: ServedFolder?, options: DaemonOptions,
        reload: @escaping @Sendable () async throws(CenariusError) -> ReloadableSettings,
        metricExport: MetricExporter? = nil,
        onListening: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws(CenariusError) {
        let sessions = TLSSessionCache()
        let settings = DaemonTransport.prepare(settings, sessions: sessions)
        let reload: @Sendable () async throws(CenariusError) -> ReloadableSettings = { () throws(CenariusError) in
            var reloaded = try await reload()
            reloaded.sync = DaemonTransport.prepare(reloaded.sync, sessions: sessions)
            // What the daemon learned of its peers outlives a reload (docs/peers.md).
            reloaded.sync.peers.health = settings.peers.health
            reloaded.sync.peers.fetching = settings.peers.fetching
            return reloaded
        }
        let holder = SettingsHolder(ReloadableSettings(sync: settings, trial: options.trial))
        let layout = settings.cache
        // Made and checked like a sync does: a cache another user owns or others can write is refused (G5).
        _ = try CacheFolder.root(layout.root)
        // One daemon per cache (G6); the lock lives as long as this process.
        guard let lock = try WriterLock.tryAcquire(path: layout.daemonLock) else {
            let holder = WriterLock.holder(layout.daemonLock).map { "pid \($0)" } ?? "another process"
            throw .storage("another cenariusd daemon (\(holder)) is already serving the cache \(layout.root)")
        }
        defer { withExtendedLifetime(lock) {} }

        let logger = {
            var logger = Logger(label: "cenariusd") { label in
                options.jsonLogs ? JSONLogHandler(label: label) as any LogHandler : JournalLog.textHandler(label: label)
            }
            logger.logLevel = options.logLevel
            return logger
        }()
        let discovered = develop == nil && options.peerDiscovery ? PeerDirectory() : nil
        let parts = DaemonParts(settings: settings, develop: develop, options: options, holder: holder, logger: logger, discovered: discovered)
        let (state, coordinator, releases, watch, reports, router, info) =
            (parts.state, parts.coordinator, parts.releases, parts.rollout, parts.reports, parts.router, parts.info)
        // OTLP metrics are `GET /metrics`'s own exposition, read at each export.
        metricExport?.attach { state.metrics.exposition(settings: state.settings) }
        let watchdog = SystemdNotifier.watchdogPeriod()
        let liveness = Liveness(timeout: settings.transfer.timeout, period: watchdog ?? 0)
        await coordinator.watch(liveness)
        if develop == nil {
            await watch.start(coordinator: coordinator)
            // Before serving: a trial whose deadline passed while the daemon was down rolls back now.
            await releases.start()
        }
        let descriptors = DescriptorLimit.raiseSoftLimit()
        let maxConnections = options.maxConnections ?? DescriptorLimit.defaultMaxConnections(limit: descriptors.after)
        logger.info("descriptors", metadata: [
            "open-files": "\(descriptors.after)", "raised-from": "\(descriptors.before)", "max-connections": "\(maxConnections)",
        ])
        var server = HTTPServer(host: options.bind, port: options.port, responder: router) { port in
            let url = "http://\(options.bind):\(port)"
            var running = info
            running.url = url
            try? FileSystem.writeAtomically(Array((try? JSONEncoder().encode(running)) ?? Data()), to: layout.daemonInfo, durable: false)
            logger.info("serving", metadata: ["url": "\(url)", "cache": "\(layout.root)", "mode": "\(develop == nil ? "cache" : "develop")"])
            onListening(url)
            SystemdNotifier.notify("READY=1\nSTATUS=serving \(url)")
        }
        server.limit = ConnectionLimit(maximum: maxConnections)

        var services: [any Service] = [server, SignalService(state: state, holder: holder, reload: reload, logger: logger),
                                       SystemdService(watchdog: watchdog, liveness: liveness, logger: logger)]
        if develop == nil { services.append(ReleaseSignalService(releases: releases, rollout: state.rollout)) }
        if let reports { services.append(reports) }
        if develop == nil && settings.remote != nil {
            // With nothing in force the first sync cannot wait: there is nothing to serve until it ends.
            let inForce = GenerationStore(layout: layout).current() != nil || FileSystem.exists(settings.preset.tablePath)
            // `--switch-at start`: a staged release switches at start, within seconds, not after a jittered wait.
            let jitter = inForce && !settings.install.switchAtStart ? max(0, options.startJitter ?? min(options.interval, 60)) : 0
            services.append(SchedulerService(coordinator: coordinator, interval: options.interval,
                                             startDelay: jitter * Double.random(in: 0..<1), logger: logger, liveness: liveness))
        } else if develop == nil {
            logger.warning("no remote configured: serving the preset and cache without syncing")
        }
        if develop == nil, let peers = options.peers {
            // A device that syncs (a remote) polls when its peers fetch a release it does not.
            let nudge = settings.remote == nil ? nil : PeerNudge { Task { _ = await coordinator.request(reason: "peer") } }
            services.append(PeerListener(options: peers, objects: ObjectStore(layout: layout), fetching: settings.peers.fetching, nudge: nudge, logger: logger))
        }
        if let discovered {
            services.append(PeerDiscovery(directory: discovered, listener: options.peers, channel: settings.channel, layout: layout,
                                          fetching: settings.peers.fetching, logger: logger))
        }
        if develop == nil && !options.bundleDirs.isEmpty {
            services.append(BundleWatch(folders: options.bundleDirs, coordinator: coordinator, logger: logger))
        }
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch {
            SystemdNotifier.notify("STOPPING=1")
            releases.stop()
            unlink(layout.daemonInfo)
            throw .storage("cannot serve on \(options.bind):\(options.port): \(error)")
        }
        releases.stop()
        await coordinator.shutdown()
        unlink(layout.daemonInfo)
        logger.info("stopped")
    }

    /// The running daemon's info, if one holds the cache's daemon lock.
    package static func running(cache: CacheLayout) -> DaemonInfo? {
        guard (try? WriterLock.tryAcquire(path: cache.daemonLock)) == nil,
              let bytes = try? FileSystem.readFile(cache.daemonInfo) else { return nil }
        return try? JSONDecoder().decode(DaemonInfo.self, from: Data(bytes))
    }
}

/// SIGHUP: re-read the configuration and sync.
struct SignalService: Service {
    let state: DaemonState
    let holder: SettingsHolder
    let reload: @Sendable () async throws(CenariusError) -> ReloadableSettings
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            SystemdNotifier.notify(SystemdNotifier.reloading)
            do {
                let settings = try await reload()
                if !settings.unchanged.isEmpty {
                    logger.warning("changed settings that are read at start only keep their value until the daemon restarts: \(settings.unchanged.joined(separator: ", "))")
                }
                holder.replace(settings)
                state.replace(settings.sync)
                await state.releases.reload(settings)
                // Last: it starts the sync the reload asks for.
                await state.coordinator.reload(settings.sync)
                SystemdNotifier.notify("READY=1\nSTATUS=configuration reloaded")
            } catch {
                logger.error("reload failed; keeping the previous configuration", metadata: ["message": "\(error.message)"])
                SystemdNotifier.notify("READY=1\nSTATUS=reload failed, previous configuration kept: \(error.message)")
            }
        }
    }
}

/// Keeps the release state in step with the cache: the `current` link is read once a second (a
/// `sync` or `resolve` process may commit while the daemon runs; its trial starts then, not at
/// the next restart), and at once on SIGUSR1 (sent by older command lines that changed it).
struct ReleaseSignalService: Service {
    let releases: ReleaseSupervisor
    let rollout: RolloutWatch
    static let pollInterval: Duration = .seconds(1)

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigusr1).cancelOnGracefulShutdown() {
                    await releases.reloadFromDisk()
                }
            }
            group.addTask {
                await cancelWhenGracefulShutdown {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.pollInterval)
                        guard !Task.isCancelled else { return }
                        await releases.observe()
                    }
                }
            }
        }
        // The release state's timers (a trial's deadline, a hold's expiry, a rollout's moment)
        // end with this service, on graceful shutdown, not after the group has stopped.
        await releases.shutdown()
        await rollout.shutdown()
    }
}
