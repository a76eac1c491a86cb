import Logging
import ResourceCache
import RouteSync
import Transport
import ServiceLifecycle

/// `--report-url`: the daemon's events posted as CloudEvents batches, at least once each. A
/// service of its own, fed by the event hub through a stream, so a slow or absent sink never
/// delays a sync or a reply; the queue lives in the cache folder and outlives restarts.
struct ReportService: Service {
    let url: String
    /// Its transport settings (CAs, client certificate, user agent) are read at each post: SIGHUP
    /// may change them; the URL is read once, at start.
    let settings: SettingsHolder
    let store: ReportStore
    let incoming: AsyncStream<CloudEvent>
    let logger: Logger
    /// Full jitter between failed posts, as for downloads: uniform in [0, min(cap, base·2^(n-1))].
    var backoff = RetryPolicy(attempts: .max, base: 0.5, cap: 300, maxRetryAfter: 0)

    /// Registers with `events` at once, so that the events of the daemon's start (a trial that
    /// expired while it was down rolls back before the services run) are reported too.
    init(url: String, settings: SettingsHolder, queuePath: String, deviceHash: String, events: EventHub, logger: Logger) {
        self.url = url
        self.settings = settings
        self.logger = logger
        store = ReportStore(path: queuePath, logger: logger)
        let (stream, continuation) = AsyncStream.makeStream(of: CloudEvent.self, bufferingPolicy: .bufferingNewest(ReportQueue.defaultMaxEvents))
        incoming = stream
        let source = CloudEvent.source(deviceHash: deviceHash)
        events.observe { name, data in
            guard CloudEvent.reported.contains(name) else { return }
            continuation.yield(CloudEvent(source: source, name: name, data: data))
        }
    }

    func run() async throws {
        await store.load()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in incoming.cancelOnGracefulShutdown() { await store.append(event.line()) }
            }
            group.addTask { await send() }
            // The first to end is the intake, at shutdown; the sender stops with it. What was not
            // acknowledged stays in the file for the next run.
            _ = await group.next()
            group.cancelAll()
        }
    }

    private func send() async {
        let shown = Secrets.redact(url)
        var failures = 0
        var wakeups = store.wakeups.makeAsyncIterator()
        while !Task.isCancelled {
            guard let batch = await store.batch() else {
                guard await wakeups.next() != nil else { return }
                continue
            }
            let (url, transfer) = (self.url, settings.current.sync.transfer)
            let result = await onThreadUntilCancelled("cenariusd-report") { HTTPPost.send(url, body: batch.body, contentType: CloudEvent.batchContentType, options: transfer) }
            guard let result else { return }
            let problem: String
            switch result {
            case .success(let status) where (200..<300).contains(status):
                await store.acknowledge(through: batch.last)
                if failures > 0 { logger.info("reports delivered again", metadata: ["url": "\(shown)", "after": "\(failures) failed attempts"]) }
                failures = 0
                continue
            case .success(let status): problem = "HTTP \(status)"
            case .failure(let error): problem = error.message
            }
            failures += 1
            let delay = backoff.backoff(attempt: failures, random: Double.random(in: 0..<1))
            let queued = await store.count
            // Once per outage at warning level: a sink down for a day must not fill the log.
            logger.log(level: failures == 1 ? .warning : .debug, "reports not delivered; retrying", metadata: [
                "url": "\(shown)", "error": "\(Secrets.redact(problem))", "queued": "\(queued)", "in": "\(Int(delay.rounded(.up))) s"])
            do { try await Task.sleep(for: .milliseconds(Int(delay * 1000))) } catch { return }
        }
    }
}
