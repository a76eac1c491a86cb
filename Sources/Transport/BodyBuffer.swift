import RouteSync
/// A body's bytes at an address that does not move while the buffer lives: the hash worker's
/// vector lanes hold pointers into bodies from one round to the next (MD5Lanes), which an
/// array's storage does not promise outside `withUnsafeBytes`.
///
/// Used by one thread at a time: filled by a transfer on its loop, then handed to a hash
/// worker, after which the transfer no longer touches it.
final class BodyBuffer: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(capacity: Int) {
        storage = .allocate(byteCount: max(capacity, 1), alignment: 16)
    }

    deinit { storage.deallocate() }

    var capacity: Int { storage.count }
    var isEmpty: Bool { count == 0 }
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }

    /// Appends `data`, which the caller has checked fits.
    func append(_ data: UnsafeRawBufferPointer) {
        precondition(count + data.count <= capacity, "BodyBuffer overflow")
        guard let source = data.baseAddress else { return }
        (storage.baseAddress! + count).copyMemory(from: source, byteCount: data.count)
        count += data.count
    }

    func removeAll() { count = 0 }
}
