import Dispatch
import RouteSync
import Synchronization
import Transport

/// Sends the queue's spans to the collector from a thread of its own, every `delay` seconds or
/// sooner when a batch is full, through libcurl like every other request (`HTTPPost`). A
/// collector that is down or answers 429/5xx gets the batch again after a growing pause (at most
/// a minute); one that refuses it (another 4xx) loses it, counted. Nothing here is on a sync's path.
final class SpanExporter: Sendable {
    static let batchSize = 512
    let queue: SpanQueue
    private let settings: TraceSettings
    private let options: TransferOptions
    private let body: @Sendable ([FinishedSpan]) -> [UInt8]
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let counts = Mutex<(exported: Int, failed: Int)>((0, 0))

    /// `timeout`: seconds to connect to the collector (twice that for a whole export).
    init(settings: TraceSettings, queue: SpanQueue, timeout: Int, body: @escaping @Sendable ([FinishedSpan]) -> [UInt8]) {
        self.settings = settings
        self.queue = queue
        self.body = body
        var options = TransferOptions()
        options.headers = settings.headers
        if let host = Remote.authority(of: settings.endpoint) { options.headerHosts = [host] }
        options.caFile = settings.caFile
        options.timeout = timeout
        self.options = options
    }

    var exported: Int { counts.withLock { $0.exported } }
    var failedExports: Int { counts.withLock { $0.failed } }

    func start() {
        DispatchQueue(label: "cenariusd.trace-export").async { [self] in
            var pause = settings.delay
            while !stopping.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + pause)
                pause = exportQueued() ? settings.delay : min(max(pause * 2, settings.delay), 60)
            }
            _ = exportQueued()
            finished.signal()
        }
    }

    /// Wakes the thread when a batch is full, so a burst does not wait out the delay.
    func spanEnded() {
        if queue.count >= Self.batchSize { wake.signal() }
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
            switch HTTPPost.send(settings.endpoint, body: body(batch), contentType: "application/json", options: options) {
            case .success(let status) where (200..<300).contains(status):
                counts.withLock { $0.exported += batch.count }
            case .success(let status) where status != 429 && (400..<500).contains(status):
                queue.drop(batch.count)
                counts.withLock { $0.failed += 1 }
            default:
                queue.putBack(batch)
                counts.withLock { $0.failed += 1 }
                return false
            }
        }
    }
}
