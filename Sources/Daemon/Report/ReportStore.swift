import Logging
import RouteSync

/// The report queue and its file (`<cache>/report-queue`), rewritten atomically at each change:
/// a crash leaves the queue before or after the change, never a torn line. Events are few (a
/// handful per sync), so a whole rewrite of at most 1 MiB is cheap.
actor ReportStore {
    /// File work, never on Swift's shared pool (FileWork).
    nonisolated var unownedExecutor: UnownedSerialExecutor { FileWork.executor }
    let path: String
    let logger: Logger
    private var queue = ReportQueue()
    /// Yields when an event is queued: the sender waits on it when the queue is empty.
    nonisolated let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        wakeups = stream
        wake = continuation
    }

    var count: Int { queue.count }
    var dropped: Int { queue.dropped }

    /// The queue a previous run left (none: an empty one).
    func load() async {
        let path = path
        // Through the cache's folder, never following a link planted at the queue's name (G5).
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let bytes = try? CacheFolder.root(folder, create: false)?.readFile(name, limit: 4 * ReportQueue.defaultMaxBytes) else { return }
        queue = ReportQueue.parse(bytes)
        if !queue.isEmpty { logger.info("reports queued by an earlier run", metadata: ["events": "\(queue.count)", "dropped": "\(queue.dropped)"]) }
    }

    func append(_ line: String) async {
        let removed = queue.append(line)
        if removed > 0 {
            logger.warning("report queue full; oldest events dropped", metadata: [
                "dropped": "\(removed)", "total dropped": "\(queue.dropped)", "queued": "\(queue.count)"])
        }
        save()
        wake.yield()
    }

    func batch() -> ReportQueue.Batch? { queue.batch() }

    func acknowledge(through last: Int) async {
        queue.acknowledge(through: last)
        save()
    }

    /// Written on the actor's own thread (FileWork), in the actor's order: an older snapshot
    /// never lands after a newer one.
    private func save() {
        do throws(CenariusError) {
            try FileSystem.writeAtomically(queue.serialized(), to: path)
        } catch {
            // The queue in memory still goes out; only a restart before it does would lose it.
            logger.error("cannot keep the report queue on disk", metadata: ["message": "\(error.message)"])
        }
    }
}
