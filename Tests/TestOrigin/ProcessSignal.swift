public import Foundation

extension Process {
    /// Sends `signal` while the process runs, and nothing once it has exited. Foundation reaps a
    /// child as it exits and its pid is free from then on; with pid_max at 32768 a busy suite
    /// wraps pids within minutes, and Linux's kill() given a thread's id signals that thread's
    /// whole process, so a late kill by a stale pid could land on another test's program or on a
    /// thread of this test process itself.
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
    }
}
