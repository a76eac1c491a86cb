import Dispatch
import Synchronization

/// Runs blocking work that lasts (libcurl's loop, a switch back waiting for the writer lock, a
/// health check) on a thread of its own, so that it never occupies one of the few cooperative
/// threads the HTTP server and the scheduler share, nor the actors' file-work thread (FileWork).
func onThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue(label: name).async { continuation.resume(returning: body()) }
    }
}

/// `onThread`, but the caller stops waiting when its task is cancelled (nil): shutdown does not
/// wait for a peer that hangs (an events sink); the work runs on to its own end, unheard.
func onThreadUntilCancelled<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T? {
    let slot = Mutex<CheckedContinuation<T?, Never>?>(nil)
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            slot.withLock { $0 = continuation }
            if Task.isCancelled { slot.withLock { $0.take() }?.resume(returning: nil) }
            DispatchQueue(label: name).async {
                let value = body()
                slot.withLock { $0.take() }?.resume(returning: value)
            }
        }
    } onCancel: {
        slot.withLock { $0.take() }?.resume(returning: nil)
    }
}
