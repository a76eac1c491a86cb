import Dispatch

/// Runs blocking work (libcurl's loop, file I/O) on its own thread so that it never occupies
/// one of the few cooperative threads the HTTP server and the scheduler share.
func onThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue(label: name).async { continuation.resume(returning: body()) }
    }
}
