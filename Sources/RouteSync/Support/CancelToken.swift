import Synchronization

/// Cancels running work from another thread (graceful shutdown, SIGTERM): a download, a pack's
/// decoding, a signature's fetch.
package final class CancelToken: Sendable {
    private let flag = Mutex(false)
    /// Cancelled with this one too: work of its own inside a larger one (a prefetch in a sync).
    private let parent: CancelToken?
    package init(following parent: CancelToken? = nil) { self.parent = parent }
    package func cancel() { flag.withLock { $0 = true } }
    package var isCancelled: Bool { flag.withLock { $0 } || (parent?.isCancelled ?? false) }
}
