import CCurl
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Verifies finished files off the download loop, so hashing uses another core instead of
/// stalling the network. The worker takes whatever has finished since its last round as one
/// batch, which is what lets BatchHasher hash eight MD5s side by side.
///
/// A body that fit the transfer's write buffer arrives whole: the worker writes the file and
/// hashes the bytes it wrote, so the loop makes no file syscall for it and nothing is read
/// back. Larger bodies were written by the loop and are hashed from the page cache.
final class HashCheck: Sendable {
    struct Done: Sendable {
        var id: Int
        var actual: ContentHash?
        var size: Int64
        /// The file could not be written (only for bodies handed over whole).
        var error: CenariusError?
    }

    struct Pending: Sendable {
        var id: Int
        var path: String
        var algorithm: ContentHash.Algorithm
        var body: [UInt8]?
    }

    struct State {
        var pending: [Pending] = []
        var done: [Done] = []
        var working = false
        var closed = false
        /// Memory held by whole bodies queued and not yet taken by the worker (their buffers' capacity).
        var queuedBodyBytes = 0
    }

    /// Files per round: enough to keep eight lanes busy while results still reach the loop promptly.
    static let batchLimit = 64
    /// Past this many queued body bytes the loop writes bodies itself, so that a worker falling
    /// behind costs time rather than memory (B1's RSS bar).
    static let queuedBodyLimit = 4 << 20

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "cenariusd.hash-check")
    /// Its buffer is reused from one round to the next; only the worker on `queue` takes it.
    private let hasher = Mutex(BatchHasher())
    /// The loop's multi handle, woken when a result is ready (curl_multi_wakeup is thread-safe).
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    func submit(id: Int, path: String, algorithm: ContentHash.Algorithm, body: [UInt8]? = nil) {
        let start = state.withLock { state in
            state.pending.append(Pending(id: id, path: path, algorithm: algorithm, body: body))
            state.queuedBodyBytes += body?.capacity ?? 0
            defer { state.working = true }
            return !state.working
        }
        if start { queue.async { [self] in work() } }
    }

    private func work() {
        while let batch = nextBatch() {
            var errors = [CenariusError?](repeating: nil, count: batch.count)
            var inputs: [BatchHasher.Input] = []
            inputs.reserveCapacity(batch.count)
            for (index, item) in batch.enumerated() {
                if let body = item.body {
                    errors[index] = Self.write(body, to: item.path)
                    inputs.append(.bytes(body))
                } else {
                    inputs.append(.file(item.path))
                }
            }
            let results = hasher.withLock { $0.hash(inputs, algorithm: batch[0].algorithm) }
            // Woken under the lock, so that after `close` returns no check touches the loop.
            state.withLock { state in
                guard !state.closed else { return }
                for (index, item) in batch.enumerated() {
                    let result = results[index]
                    state.done.append(Done(id: item.id, actual: result?.0, size: result?.1 ?? -1, error: errors[index]))
                }
                wake()
            }
        }
    }

    private static func write(_ body: [UInt8], to path: String) -> CenariusError? {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return FileSystem.failure("cannot create", path) }
        defer { Glibc.close(fd) }
        return FileSystem.writeAll(fd, body) ? nil : FileSystem.failure("cannot write", path)
    }

    /// Whether a whole body of this size may be handed over now.
    func hasRoom(for bytes: Int) -> Bool {
        state.withLock { $0.queuedBodyBytes + bytes <= Self.queuedBodyLimit }
    }

    /// The next files to hash, all of one algorithm; nil (and the worker stops) when there are none.
    private func nextBatch() -> [Pending]? {
        state.withLock { state in
            guard !state.closed, let algorithm = state.pending.first?.algorithm else {
                state.working = false
                return nil
            }
            var batch: [Pending] = []
            var rest: [Pending] = []
            for item in state.pending {
                if item.algorithm == algorithm && batch.count < Self.batchLimit { batch.append(item) } else { rest.append(item) }
            }
            state.pending = rest
            state.queuedBodyBytes -= batch.reduce(0) { $0 + ($1.body?.capacity ?? 0) }
            return batch
        }
    }

    /// Results ready since the last call.
    func collect() -> [Done] {
        state.withLock { state in
            defer { state.done.removeAll(keepingCapacity: true) }
            return state.done
        }
    }

    /// The loop is done (its multi handle may go): checks not yet started are dropped, and this
    /// waits for the round in progress, so that no file is written after the download returns.
    func close() {
        state.withLock { $0.closed = true }
        queue.sync {}
    }
}
