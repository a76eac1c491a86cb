import CPlatform
import Logging
import RouteSync
import ServiceLifecycle

/// The periodic sync as a service: a sync at start (after `startDelay`), then one per interval
/// window (jittered), backing off on failure, woken early by requests; ends on graceful shutdown.
struct SchedulerService: Service {
    let coordinator: SyncCoordinator
    let interval: Double
    /// Seconds before the first sync (start jitter); a request wakes it early.
    var startDelay: Double = 0
    let logger: Logger
    /// Told when the scheduler waits and wakes, for the watchdog.
    var liveness: Liveness?

    func run() async throws {
        var schedule = SyncSchedule(interval: interval)
        var wakeups = coordinator.wakeups.makeAsyncIterator()
        var generator = SystemRandomNumberGenerator()
        await withGracefulShutdownHandler {
            var windowStart = ContinuousClock.now
            var reason = "start"
            if startDelay > 0 {
                logger.debug("first sync", metadata: ["in": "\(Whole.text(startDelay.rounded())) s"])
                guard await wait(startDelay, wakeups: &wakeups) else { return }
                windowStart = ContinuousClock.now
            }
            while !Task.isCancelled {
                let result = await coordinator.runOnce(reason: reason)
                reason = "schedule"
                let now = ContinuousClock.now
                if now - windowStart >= .seconds(interval) { windowStart = now }
                let elapsed = now - windowStart
                let outcome: SyncSchedule.Outcome
                switch result {
                case .success: outcome = .success
                case .failure(let error): outcome = .failure(retryAfter: error.retryAfter)
                }
                let delay = schedule.delay(
                    after: outcome, random: Double.random(in: 0..<1, using: &generator),
                    elapsedInWindow: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                logger.debug("next sync", metadata: ["in": "\(Whole.text(delay.rounded())) s"])
                if case .success = outcome { windowStart = windowStart + .seconds(interval) }
                guard await wait(delay, wakeups: &wakeups) else { return }
            }
        } onGracefulShutdown: {
            Task { await coordinator.shutdown() }
        }
    }
}

extension SchedulerService {
    /// Until the timer fires or a request wakes the scheduler; false when the daemon shuts down.
    private func wait(_ delay: Double, wakeups: inout AsyncStream<Void>.Iterator) async -> Bool {
        await coordinator.scheduled(at: FileSystem.now() + delay)
        liveness?.waiting(for: delay)
        let timer = Task { [coordinator] in
            try await Task.sleep(for: .milliseconds(Whole.sleepMilliseconds(delay)))
            await coordinator.timerFired()
        }
        // Once a sync and what follows it (events, receipts, logs) have settled, the code they
        // and the start-up ran need not stay mapped while the daemon idles (F). Not before a
        // sync due within a minute: it would only read those pages back from the file.
        let settle = delay >= 60 ? Task {
            try await Task.sleep(for: .seconds(1))
            await onThread("cenariusd-idle") { cplatform_release_code_pages() }
        } : nil
        defer {
            timer.cancel()
            settle?.cancel()
            liveness?.woke()
        }
        return await wakeups.next() != nil
    }
}

extension SyncCoordinator {
    /// The scheduler's timer: a wake-up without a receipt.
    func timerFired() { wakeTimer() }
}
