import Dispatch
import RouteSync
import Synchronization
import Tracing
import Transport

/// Sends the queue's spans to the collector from a thread of its own, every `delay` seconds or
/// sooner when a batch is full, through libcurl like every other request (`HTTPPost`). A
/// collector that is down or answers 429/5xx gets the batch again after a growing pause (at most
/// a minute); one that refuses it (another 4xx) loses it, counted. Nothing here is on a sync's path.
final class SpanExporter: Sendable {
    static let batchSize = 512
    let queue: SpanQueue
    /// Where exports go and how: replaced whole by a reload (`retarget`).
    private let target: Mutex<Target>
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    struct Target: Sendable {
        var endpoint: String
        var options: TransferOptions
        var delay: Double
        var resource: [(key: String, value: SpanAttribute)]

        /// `timeout`: seconds to connect to the collector (twice that for a whole export).
        init(_ settings: TraceSettings, timeout: Int) {
            endpoint = settings.endpoint
            options = .collector(settings.endpoint, headers: settings.headers, caFile: settings.caFile, timeout: timeout)
            delay = settings.delay
            resource = settings.resource.map { (key: $0.key, value: SpanAttribute.string($0.value)) }
        }
    }

    init(_ target: Target, queue: SpanQueue) {
        self.target = Mutex(target)
        self.queue = queue
    }

    /// A reload's collector, from the next export on.
    func retarget(_ target: Target) {
        self.target.withLock { $0 = target }
    }

    func start() {
        DispatchQueue(label: "cenariusd.trace-export").async { [self] in
            var pause = target.withLock { $0.delay }
            while !stopping.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + pause)
                let delay = target.withLock { $0.delay }
                pause = exportQueued() ? delay : min(max(pause * 2, delay), 60)
            }
            _ = exportQueued()
            finished.signal()
        }
    }

    /// Wakes the thread when a batch is full, so a burst does not wait out the delay.
    func spanEnded() {
        if queue.count >= Self.batchSize { wake.signal() }
    }

    /// Wakes the thread to export what is queued now, not at the end of the delay. A command's
    /// exporter has no thread: it exports at exit (`exportNow`) whatever this says.
    func flush() {
        wake.signal()
    }

    /// What is queued, exported on the caller's thread: a command's one sync, at its exit (a thread
    /// of its own would cost more than the export).
    func exportNow() {
        _ = exportQueued()
    }

    /// Exports what is queued and stops, waiting at most `timeout` seconds.
    func shutdown(timeout: Double) {
        stopping.store(true, ordering: .relaxed)
        wake.signal()
        _ = finished.wait(timeout: .now() + timeout)
    }

    /// False when the collector should be left alone for a while.
    @discardableResult
    private func exportQueued() -> Bool {
        while true {
            let batch = queue.take(Self.batchSize)
            guard !batch.isEmpty else { return true }
            let target = self.target.withLock { $0 }
            let body = OTLPJSON.request(batch, resource: target.resource, scopeVersion: CenariusVersion.string)
            switch HTTPPost.send(target.endpoint, body: body, contentType: "application/json", options: target.options) {
            case .success(let status) where (200..<300).contains(status):
                continue
            case .success(let status) where status != 429 && (400..<500).contains(status):
                queue.drop(batch.count)
            default:
                queue.putBack(batch)
                return false
            }
        }
    }
}
