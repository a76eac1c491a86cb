import Metrics
import Prometheus
import ResourceCache
import RouteSync
import Synchronization
import Telemetry

/// The daemon's metrics, through swift-metrics with a Prometheus registry of its own (no global
/// bootstrap, so that several daemons can live in one test process).
package final class DaemonMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let syncs: [SyncReport.Outcome: Metrics.Counter]
    private let syncFailures: [CenariusError.Code: Metrics.Counter]
    private let downloadedBytes: Metrics.Counter
    private let downloadedFiles: Metrics.Counter
    /// Bytes on the wire for files and their forms, and bytes those files hold (B8).
    private let fetchedBytes: Metrics.Counter
    /// Of the fetched bytes, those from LAN peers, and those from the origin and its mirrors (docs/peers.md).
    private let peerBytes: Metrics.Counter
    private let originBytes: Metrics.Counter
    private let heldBytes: Metrics.Counter
    private let lookups: [Resolution.Source: Metrics.Counter]
    private let staleLookups: Metrics.Counter
    private let generation: Metrics.Gauge
    private let tableAge: Metrics.Gauge
    /// When the signature of the table in force expires (G8); 0 when it does not.
    private let tableExpires: Metrics.Gauge
    private let requestLatency: Metrics.Timer
    private let preparedReplies: Metrics.Counter
    private let rollbacks: [RollbackReason: Metrics.Counter]
    private let syncRuns: [String: Metrics.Counter]
    private let onTrial: Metrics.Gauge
    private let confirmedGeneration: Metrics.Gauge
    private let eventStreams: Metrics.Gauge
    /// Spans the tracer could not deliver (docs/telemetry.md), brought up to the queue's count at each scrape.
    private let droppedSpans: Metrics.Counter
    private let droppedSpansSeen = Mutex<Int>(0)

    /// What starts a sync, as logs, receipts and `cenarius_sync_runs_total` name it.
    static let syncReasons = ["start", "schedule", "request", "lookup", "signal", "rollout", "hold"]

    package init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2), .seconds(10),
        ]
        syncs = Dictionary(uniqueKeysWithValues: [SyncReport.Outcome.committed, .notModified, .unchanged, .heldBack, .deferred, .held].map {
            ($0, Metrics.Counter(label: "cenarius_syncs_total", dimensions: [("outcome", $0.rawValue)], factory: factory))
        })
        syncFailures = Dictionary(uniqueKeysWithValues: CenariusError.Code.allCases.filter { $0 != .ok }.map {
            ($0, Metrics.Counter(label: "cenarius_sync_failures_total", dimensions: [("error", $0.name)], factory: factory))
        })
        downloadedBytes = Metrics.Counter(label: "cenarius_downloaded_bytes_total", factory: factory)
        downloadedFiles = Metrics.Counter(label: "cenarius_downloaded_files_total", factory: factory)
        fetchedBytes = Metrics.Counter(label: "cenarius_fetched_bytes_total", factory: factory)
        peerBytes = Metrics.Counter(label: "cenarius_fetched_bytes_by_source_total", dimensions: [("source", "peer")], factory: factory)
        originBytes = Metrics.Counter(label: "cenarius_fetched_bytes_by_source_total", dimensions: [("source", "origin")], factory: factory)
        heldBytes = Metrics.Counter(label: "cenarius_held_bytes_total", factory: factory)
        lookups = Dictionary(uniqueKeysWithValues: Resolution.Source.allCases.map {
            ($0, Metrics.Counter(label: "cenarius_lookups_total", dimensions: [("source", $0.rawValue)], factory: factory))
        })
        staleLookups = Metrics.Counter(label: "cenarius_stale_lookups_total", factory: factory)
        generation = Metrics.Gauge(label: "cenarius_generation", factory: factory)
        tableAge = Metrics.Gauge(label: "cenarius_table_age_seconds", factory: factory)
        tableExpires = Metrics.Gauge(label: "cenarius_table_expires_timestamp_seconds", factory: factory)
        requestLatency = Metrics.Timer(label: "cenarius_http_request_duration_seconds", factory: factory)
        preparedReplies = Metrics.Counter(label: "cenarius_http_prepared_replies_total", factory: factory)
        rollbacks = Dictionary(uniqueKeysWithValues: RollbackReason.allCases.map {
            ($0, Metrics.Counter(label: "cenarius_rollbacks_total", dimensions: [("reason", $0.rawValue)], factory: factory))
        })
        syncRuns = Dictionary(uniqueKeysWithValues: Self.syncReasons.map {
            ($0, Metrics.Counter(label: "cenarius_sync_runs_total", dimensions: [("reason", $0)], factory: factory))
        })
        onTrial = Metrics.Gauge(label: "cenarius_trial", factory: factory)
        confirmedGeneration = Metrics.Gauge(label: "cenarius_confirmed_generation", factory: factory)
        eventStreams = Metrics.Gauge(label: "cenarius_event_streams", factory: factory)
        droppedSpans = Metrics.Counter(label: "cenarius_trace_spans_dropped_total", factory: factory)
    }

    func recordRollback(_ reason: RollbackReason) {
        rollbacks[reason]?.increment()
    }

    func recordSyncRun(reason: String) {
        syncRuns[reason]?.increment()
    }

    func recordRelease(_ state: ReleaseState) {
        onTrial.record(state.trial == nil ? 0 : 1)
        confirmedGeneration.record(state.confirmed ?? 0)
    }

    func recordEventStreams(_ count: Int) {
        eventStreams.record(count)
    }

    func recordSync(_ result: Result<SyncReport, CenariusError>) {
        switch result {
        case .success(let report):
            syncs[report.outcome]?.increment()
            downloadedBytes.increment(by: Int(report.downloadedBytes))
            downloadedFiles.increment(by: report.downloadedFiles)
            fetchedBytes.increment(by: Int(report.bytesFetched))
            peerBytes.increment(by: Int(report.bytesFromPeers))
            originBytes.increment(by: Int(report.bytesFromOrigin))
            heldBytes.increment(by: Int(report.bytesHeld))
            if let number = report.generation { generation.record(number) }
        case .failure(let error):
            // A sync stopped by shutdown is no failure of the remote (or of anything).
            if !error.isCancelled { syncFailures[error.code]?.increment() }
        }
    }

    func recordLookup(_ resolution: Resolution) {
        recordLookup(source: resolution.source, stale: resolution.stale)
    }

    func recordLookup(source: Resolution.Source, stale: Bool) {
        lookups[source]?.increment()
        if stale { staleLookups.increment() }
    }

    /// A reply written from memory on the event loop: counted, not timed (two clock reads and
    /// a histogram update would be a tenth of the request's own cost).
    func recordPreparedReply(source: Resolution.Source) {
        preparedReplies.increment()
        lookups[source]?.increment()
    }

    /// Requests answered off the event loop: the control API, a file's first request, refreshes.
    func recordRequest(since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        requestLatency.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }

    /// Prometheus text; the gauges that depend on time are set as of now.
    func exposition(settings: SyncSettings) -> [UInt8] {
        let store = GenerationStore(layout: settings.cache)
        if let current = store.current() {
            generation.record(current.number)
            if let meta = try? current.meta() {
                tableAge.record(FileSystem.now() - meta.committedAt)
                tableExpires.record(meta.signatureExpires ?? 0)
            }
        }
        let dropped = SpanQueue.droppedInProcess.load(ordering: .relaxed)
        let more = droppedSpansSeen.withLock { seen in
            defer { seen = max(seen, dropped) }
            return dropped - seen
        }
        if more > 0 { droppedSpans.increment(by: more) }
        return registry.emitToBuffer()
    }
}
