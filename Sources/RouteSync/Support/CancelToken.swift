import Synchronization

/// Cancels running work from another thread (graceful shutdown, SIGTERM): a download, a pack's
/// decoding, a signature's fetch.
package final class CancelToken: Sendable {
    private let flag = Mutex(false)
    package init() {}
    package func cancel() { flag.withLock { $0 = true } }
    package var isCancelled: Bool { flag.withLock { $0 } }
}
