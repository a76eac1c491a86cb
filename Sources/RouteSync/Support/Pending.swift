import Dispatch
import Synchronization

/// Work begun on another thread now and waited for later: a publisher's lock is taken (on a store
/// without conditional writes, a lease that must settle for 1 s) while its release is staged, and
/// a solid pack is compressed on one core while the files' forms are on the other.
package final class Pending<T: Sendable>: Sendable {
    private let outcome = Mutex<Result<T, CenariusError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    package init(_ work: @escaping @Sendable () throws(CenariusError) -> T) {
        DispatchQueue.global().async { [self] in
            let result = Result { () throws(CenariusError) in try work() }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// Its result, once it has one.
    package func wait() throws(CenariusError) -> T {
        done.wait()
        done.signal()
        return try outcome.withLock { $0! }.get()
    }
}
