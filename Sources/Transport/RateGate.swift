import RouteSync
import Synchronization

/// `--max-rate` across every transfer of a run, however many loops and connections carry them.
///
/// libcurl's own limit (CURLOPT_MAX_RECV_SPEED_LARGE) is per transfer and lets about a second's
/// burst through at the start of each, so a run of many small files is not capped at all. The
/// gate counts what every transfer received; a loop that is ahead of `rate × elapsed` waits before
/// it reads its sockets again, and TCP's flow control slows the senders. Overshoot inside one
/// read is paid back by the next wait, so the run's average holds.
final class RateGate: Sendable {
    private let rate: Double
    private let started: Double
    /// Bytes a run may take at once before the pace applies (a quarter second's worth).
    private let burst: Double
    private let received = Atomic<Int64>(0)

    init(bytesPerSecond: Int64, now: Double = FileSystem.monotonic()) {
        rate = Double(bytesPerSecond)
        started = now
        burst = Double(bytesPerSecond) / 4
    }

    func add(_ bytes: Int) { received.add(Int64(bytes), ordering: .relaxed) }

    /// Seconds to wait before reading more; 0 when the run is within its rate.
    func wait(now: Double = FileSystem.monotonic()) -> Double {
        let due = (Double(received.load(ordering: .relaxed)) - burst) / rate
        return max(0, due - (now - started))
    }
}
