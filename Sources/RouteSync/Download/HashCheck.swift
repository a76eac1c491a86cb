import CCurl
import Dispatch
import Synchronization

/// Verifies finished files off the download loop: files are hashed from the page cache on a
/// worker while the loop goes on receiving others, so hashing uses another core instead of
/// stalling the network. The worker takes whatever has finished since its last round as one
/// batch, which is what lets BatchHasher hash eight MD5s side by side.
/// Hashing what was written, rather than what arrived, also checks the write.
final class HashCheck: Sendable {
    struct Done: Sendable {
        var id: Int
        var actual: ContentHash?
        var size: Int64
    }

    struct Pending: Sendable {
        var id: Int
        var path: String
        var algorithm: ContentHash.Algorithm
    }

    struct State {
        var pending: [Pending] = []
        var done: [Done] = []
        var working = false
        var closed = false
    }

    /// Files per round: enough to keep eight lanes busy while results still reach the loop promptly.
    static let batchLimit = 64

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "cenariusd.hash-check")
    /// Its buffer is reused from one round to the next; only the worker on `queue` takes it.
    private let hasher = Mutex(BatchHasher())
    /// The loop's multi handle, woken when a result is ready (curl_multi_wakeup is thread-safe).
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    func submit(id: Int, path: String, algorithm: ContentHash.Algorithm) {
        let start = state.withLock { state in
            state.pending.append(Pending(id: id, path: path, algorithm: algorithm))
            defer { state.working = true }
            return !state.working
        }
        if start { queue.async { [self] in work() } }
    }

    private func work() {
        while let batch = nextBatch() {
            let results = hasher.withLock { $0.hash(batch.map(\.path), algorithm: batch[0].algorithm) }
            // Woken under the lock, so that after `close` returns no check touches the loop.
            state.withLock { state in
                guard !state.closed else { return }
                for (item, result) in zip(batch, results) {
                    state.done.append(Done(id: item.id, actual: result?.0, size: result?.1 ?? -1))
                }
                wake()
            }
        }
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

    /// The loop is done (its multi handle may go): checks still running are dropped.
    func close() {
        state.withLock { $0.closed = true }
    }
}
