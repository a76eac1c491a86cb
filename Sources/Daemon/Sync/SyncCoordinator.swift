import CPlatform
import Logging
package import ResourceCache
package import RouteSync

/// Owns every sync the daemon runs: periodic, requested over HTTP, triggered by SIGHUP or by a
/// lookup that found nothing current. One runs at a time; callers arriving while one runs share
/// its result (single-flight), and requests made meanwhile are served by the next run.
package actor SyncCoordinator {
    /// File work, never on Swift's shared pool (FileWork).
    package nonisolated var unownedExecutor: UnownedSerialExecutor { FileWork.executor }
    private(set) var settings: SyncSettings
    private let logger: Logger
    private let metrics: DaemonMetrics?
    private let cancel = CancelToken()
    private var receipts: [String: SyncReceipt] = [:]
    private var receiptOrder: [String] = []
    private var pending: [String] = []
    private var running: Task<Result<SyncReport, CenariusError>, Never>?
    /// What runs is an import (a bundle's release): a sync waits for it rather than taking its result.
    private var runningImport = false
    /// Why the next run of the scheduler happens, when something other than its timer woke it.
    private var pendingReason: String?
    /// The strongest switch asked for by the requests the next run serves (POST /_cenarius/switch).
    private var pendingSwitching: InstallPolicy.Switching?
    /// The last sync's outcome and the next scheduled one, for `/health` and `status`.
    private(set) var history = SyncHistory()
    private var lastAttempt = -Double.infinity
    private var nextID = 1
    private let wake: AsyncStream<Void>.Continuation
    /// Called before every sync (with its reason), and after: the current generation may have
    /// moved, a release may begin its trial.
    private let onStart: @Sendable (String) async -> Void
    private let onFinish: @Sendable (FinishedSync) async -> Void
    /// How a committed generation fared since, for receipts.
    private let releaseMark: @Sendable (Int) -> ReleaseMark?
    /// The peers DNS-SD found (`--peer-discovery`), asked after the static ones; nil: none.
    private let discovered: PeerDirectory?
    /// Told when a sync runs and shows progress, for the watchdog.
    var liveness: Liveness?
    func watch(_ liveness: Liveness) { self.liveness = liveness }
    /// The scheduler's wake-up stream: yielded to when a sync is requested.
    nonisolated let wakeups: AsyncStream<Void>

    static let keptReceipts = 256

    init(settings: SyncSettings, logger: Logger, metrics: DaemonMetrics?,
         onStart: @escaping @Sendable (String) async -> Void = { _ in },
         onFinish: @escaping @Sendable (FinishedSync) async -> Void = { _ in },
         releaseMark: @escaping @Sendable (Int) -> ReleaseMark? = { _ in nil }, discovered: PeerDirectory? = nil) {
        self.settings = settings
        self.discovered = discovered
        self.onStart = onStart
        self.onFinish = onFinish
        self.releaseMark = releaseMark
        history.lastSuccessAt = FileSystem.modificationTime(settings.cache.checked)
        self.logger = logger
        self.metrics = metrics
        (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// `POST /_cenarius/sync` (or SIGHUP, reason `signal`): a receipt now, the sync soon.
    package func request(reason: String = "request", switching: InstallPolicy.Switching? = nil) -> SyncReceipt {
        let id = String(format6(nextID))
        nextID += 1
        if pendingReason == nil || switching != nil { pendingReason = reason }
        if let switching { pendingSwitching = pendingSwitching == .force ? .force : switching }
        let receipt = SyncReceipt(id: id, status: .requested, requestedAt: FileSystem.now(), reason: reason)
        receipts[id] = receipt
        receiptOrder.append(id)
        if receiptOrder.count > Self.keptReceipts { receipts.removeValue(forKey: receiptOrder.removeFirst()) }
        pending.append(id)
        wake.yield()
        return receipt
    }

    package func receipt(_ id: String) -> SyncReceipt? {
        guard var receipt = receipts[id] else { return nil }
        if receipt.report?.outcome == .committed, let generation = receipt.report?.generation {
            receipt.release = releaseMark(generation)
        }
        return receipt
    }

    /// SIGHUP: new settings, then a sync.
    package func reload(_ settings: SyncSettings) {
        self.settings = settings
        logger.info("configuration reloaded", metadata: ["remote": "\(Secrets.redact(settings.remote?.base ?? "-"))"])
        _ = request(reason: "signal")
    }

    /// Runs a sync now, or joins the one running. The scheduler's runs take the reason of the
    /// request that woke it, if one did.
    package func runOnce(reason requested: String) async -> Result<SyncReport, CenariusError> {
        while runningImport, let running { _ = await running.value }
        if let running { return await running.value }
        let reason = requested == "schedule" ? pendingReason ?? requested : requested
        pendingReason = nil
        // The daemon's first sync may make the switch `--switch-at start` keeps for it.
        let switching = pendingSwitching ?? (requested == "start" ? .start : .scheduled)
        pendingSwitching = nil
        let ids = pending
        pending.removeAll()
        for id in ids { receipts[id]?.reason = reason }
        let previous = GenerationStore(layout: settings.cache).current()?.number
        let started = FileSystem.now()
        for id in ids { receipts[id]?.status = .running; receipts[id]?.startedAt = started }
        lastAttempt = FileSystem.monotonic()
        await onStart(reason)
        let (settings, discovered, cancel, liveness) = (settings, discovered, cancel, liveness)
        liveness?.progressed()
        let task = Task {
            await onThread("cenariusd-sync") {
                var settings = settings
                // The seam between DNS-SD and syncing: the peers found now join the static ones
                // (the first sync waits a moment for the LAN's answers), and what the daemon
                // learned of each (PeerHealth, by URL) stays as the list changes.
                if let discovered {
                    (settings.peers.urls, settings.peers.announced) = discovered.joined(to: settings.peers.urls, settling: PeerDirectory.settleTime)
                    // Shares are dealt over the peers and this device: found peers need its own place too.
                    if settings.peers.me == nil { settings.peers.me = discovered.ownURL }
                }
                let syncer = { var syncer = Syncer(settings: settings); syncer.switching = switching; return syncer }()
                let result = Result(catching: { () throws(CenariusError) in
                    try syncer.sync(cancel: cancel, progress: liveness.map { liveness in { _ in liveness.progressed() } })
                })
                liveness?.synced()
                // A large sync leaves its bodies' and libcurl's freed buffers in malloc's arenas
                // (16 MiB after the B1 site); a kiosk's daemon should idle at its own size.
                cplatform_release_free_memory()
                return result
            }
        }
        running = task
        let result = await task.value
        // The release's trial begins before the receipts say SUCCEED, so that whoever follows a
        // receipt sees the trial it started.
        await onFinish(FinishedSync(result: result, reason: reason, previous: previous))
        finish(ids, result, reason: reason, seconds: FileSystem.now() - started)
        running = nil
        return result
    }

    /// `POST /_cenarius/import` and `serve --bundle-dir` (reason `import`, `bundle-dir`): a receipt
    /// now; the bundle is applied once no sync runs, as a sync is (the trial, the events, the
    /// receipts), so a command line and the daemon never race over the cache (docs/bundles.md).
    package func requestImport(_ path: String, reason: String = "import") -> SyncReceipt {
        let id = String(format6(nextID))
        nextID += 1
        let receipt = SyncReceipt(id: id, status: .requested, requestedAt: FileSystem.now(), reason: reason)
        receipts[id] = receipt
        receiptOrder.append(id)
        if receiptOrder.count > Self.keptReceipts { receipts.removeValue(forKey: receiptOrder.removeFirst()) }
        Task { _ = await self.runImport(path, id: id, reason: reason) }
        return receipt
    }

    /// Applies the bundle at `path` after the sync or import running now, if any.
    package func runImport(_ path: String, id: String? = nil, reason: String) async -> Result<SyncReport, CenariusError> {
        while let running { _ = await running.value }
        let previous = GenerationStore(layout: settings.cache).current()?.number
        let started = FileSystem.now()
        if let id { receipts[id]?.status = .running; receipts[id]?.startedAt = started }
        let importer = BundleImport(settings: settings)
        let (cancel, liveness, logger) = (cancel, liveness, logger)
        let task = Task {
            await onThread("cenariusd-import") {
                let result = Result(catching: { () throws(CenariusError) in
                    try importer.run(path, cancel: cancel, progress: liveness.map { liveness in { _ in liveness.progressed() } }) { problem in
                        logger.warning("bundle report", metadata: ["bundle": "\(path)", "message": "\(problem)"])
                    }
                })
                cplatform_release_free_memory()
                return result
            }
        }
        running = task
        runningImport = true
        await onStart(reason)
        let result = await task.value
        await onFinish(FinishedSync(result: result, reason: reason, previous: previous))
        finish(id.map { [$0] } ?? [], result, reason: reason, seconds: FileSystem.now() - started)
        running = nil
        runningImport = false
        return result
    }

    /// A lookup found nothing current: refresh unless one ran within `minRefetch` seconds.
    package func refreshForLookup() async -> CenariusError? {
        if let running {
            if case .failure(let error) = await running.value { return error }
            return nil
        }
        guard FileSystem.monotonic() - lastAttempt >= settings.minRefetch else { return nil }
        if case .failure(let error) = await runOnce(reason: "lookup") { return error }
        return nil
    }

    func wakeTimer() { wake.yield() }

    /// Graceful shutdown: in-flight downloads stop, nothing half-built is committed.
    package func shutdown() {
        cancel.cancel()
        wake.finish()
    }

    /// The scheduler's next run, in seconds since 1970.
    func scheduled(at time: Double) { history.nextSyncAt = time }

    private func finish(_ ids: [String], _ result: Result<SyncReport, CenariusError>, reason: String, seconds: Double) {
        let now = FileSystem.now()
        history.record(result, reason: reason, at: now)
        for id in ids {
            receipts[id]?.finishedAt = now
            switch result {
            case .success(let report):
                receipts[id]?.status = .succeed
                receipts[id]?.report = report
            case .failure(let error):
                receipts[id]?.status = error.isCancelled ? .cancelled : .failed
                receipts[id]?.error = error.code.rawValue
                receipts[id]?.desc = error.code.name
                receipts[id]?.message = error.message
            }
        }
        metrics?.recordSync(result)
        metrics?.recordSyncRun(reason: reason)
        switch result {
        case .success(let report):
            logger.info("sync \(report.outcome.rawValue)", metadata: [
                "reason": "\(reason)", "generation": "\(report.generation.map(String.init) ?? "-")",
                "entries": "\(report.entries)", "files": "\(report.downloadedFiles)", "bytes": "\(report.downloadedBytes)",
                "reused": "\(report.reusedObjects)", "preset": "\(report.servedFromPreset)",
                "seconds": "\(Double(Whole.clamped(report.seconds * 1000)) / 1000)",
            ])
        case .failure(let error) where error.isCancelled:
            logger.notice("sync cancelled", metadata: ["reason": "\(reason)", "seconds": "\(Double(Int(seconds * 1000)) / 1000)"])
        case .failure(let error):
            logger.error("sync failed", metadata: [
                "reason": "\(reason)", "error": "\(error.code.name)", "message": "\(error.message)",
                "seconds": "\(Double(Whole.clamped(seconds * 1000)) / 1000)",
            ])
        }
    }
}

private func format6(_ n: Int) -> String {
    let text = String(n)
    return String(repeating: "0", count: max(0, 6 - text.count)) + text
}

extension Result where Failure == CenariusError {
    init(catching body: () throws(CenariusError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}

/// A sync that ended, as the daemon's other parts hear of it.
struct FinishedSync: Sendable {
    var result: Result<SyncReport, CenariusError>
    var reason: String
    /// The generation current before it.
    var previous: Int?
}
