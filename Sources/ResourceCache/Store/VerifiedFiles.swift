import RouteSync
import Synchronization

/// Temporary files whose bytes checked out against their hashes, gathered from several threads
/// (the owners' asking, OwnersMeanwhile) for one `ObjectStore.adoptAll` once they have all ended.
final class VerifiedFiles: Sendable {
    private let files = Mutex<[(temporary: String, hash: ContentHash)]>([])

    func add(_ more: [(temporary: String, hash: ContentHash)]) {
        files.withLock { $0 += more }
    }

    /// Every file added so far, now the caller's to adopt.
    func take() -> [(temporary: String, hash: ContentHash)] {
        files.withLock { files in
            defer { files = [] }
            return files
        }
    }
}
