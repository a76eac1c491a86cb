import Dispatch
import Fleet
import RouteSync

#if canImport(Glibc)
import Glibc
#endif

/// `fleet`'s progress line on a terminal (for logs that take more than a second), and the thread
/// it reads on.
enum FleetProgress {
    /// "reading access.log.3.gz: 612 MB of 1.36 GB (45%)", rewritten in place on stderr.
    @Sendable static func show(_ progress: FleetReading.Progress) {
        let percent = progress.total > 0 ? min(100, progress.done * 100 / progress.total) : 0
        let text = "\r\u{1B}[Kreading \(progress.path): \(megabytes(progress.done)) of \(megabytes(progress.total)) (\(percent)%)"
        _ = text.utf8CString.withUnsafeBytes { write(2, $0.baseAddress, $0.count - 1) }
    }

    /// Clears the line `show` left, if any.
    static func clear() {
        let text = "\r\u{1B}[K"
        _ = text.utf8CString.withUnsafeBytes { write(2, $0.baseAddress, $0.count - 1) }
    }

    private static func megabytes(_ bytes: Int) -> String {
        bytes >= 1_000_000_000 ? "\(bytes / 1_000_000_000).\(bytes / 10_000_000 % 100) GB" : "\(bytes / 1_000_000) MB"
    }

    /// Reading blocks (files, threads waiting on each other): a thread of its own, not one of the
    /// concurrency pool's.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws(CenariusError) -> T) async throws(CenariusError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, CenariusError>, Never>) in
            DispatchQueue(label: "cenariusd.fleet").async {
                do throws(CenariusError) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}
