import CCurl
import Dispatch
import Synchronization

/// Verifies finished files off the download loop: each file is hashed from the page cache on
/// a Dispatch worker while the loop goes on receiving others, so hashing (MD5 runs at about
/// the speed of a loopback transfer) uses another core instead of stalling the network.
/// Hashing what was written, rather than what arrived, also checks the write.
final class HashCheck: Sendable {
    struct Done: Sendable {
        var id: Int
        var actual: ContentHash?
        var size: Int64
    }

    private let state = Mutex<(done: [Done], closed: Bool)>(([], false))
    private let queue = DispatchQueue(label: "cenariusd.hash-check", attributes: .concurrent)
    /// The loop's multi handle, woken when a result is ready (curl_multi_wakeup is thread-safe).
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    func submit(id: Int, path: String, algorithm: ContentHash.Algorithm) {
        queue.async { [self] in
            let result = try? FileSystem.hashFile(path, algorithm: algorithm)
            // Woken under the lock, so that after `close` returns no check touches the loop.
            state.withLock { state in
                guard !state.closed else { return }
                state.done.append(Done(id: id, actual: result?.0, size: result?.1 ?? -1))
                wake()
            }
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
