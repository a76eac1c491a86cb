import Logging
import NIOCore
import NIOPosix
import RouteSync
import ServiceLifecycle
import Synchronization

/// The daemon's side of systemd's notify protocol beyond `READY=1` (docs/service.md): `STOPPING=1`
/// as soon as a graceful shutdown begins, and `WATCHDOG=1` every half `WATCHDOG_USEC`, sent only
/// when every event loop of the HTTP server ran a task just now and the sync scheduler comes round
/// (`Liveness`), so that systemd restarts a daemon whose loop or scheduler hangs.
struct SystemdService: Service {
    let watchdog: Double?
    let liveness: Liveness
    let logger: Logger

    func run() async throws {
        await withGracefulShutdownHandler {
            guard let watchdog else {
                try? await gracefulShutdown()
                return
            }
            await cancelWhenGracefulShutdown { await ping(every: watchdog) }
        } onGracefulShutdown: {
            SystemdNotifier.notify("STOPPING=1")
        }
    }

    private func ping(every period: Double) async {
        var stuck = false
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(Whole.sleepMilliseconds(period)))
            guard !Task.isCancelled else { return }
            if let reason = liveness.stuck() {
                if !stuck { logger.critical("the sync scheduler is stuck; no more watchdog pings, systemd restarts the daemon", metadata: ["reason": "\(reason)"]) }
                stuck = true
                continue
            }
            if stuck { logger.notice("the sync scheduler moves again; watchdog pings resume") }
            stuck = false
            if await Self.loopsAnswer(within: period) { SystemdNotifier.notify("WATCHDOG=1") }
        }
    }

    /// Every event loop of the server ran a task within `seconds`: none is blocked. A blocked loop
    /// never answers; the wait ends by its own clock, not the loop's.
    static func loopsAnswer(within seconds: Double) async -> Bool {
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let race = Race(continuation, answersNeeded: loops.count)
            let timer = Task {
                try? await Task.sleep(for: .milliseconds(Whole.sleepMilliseconds(seconds)))
                race.settle(false)
            }
            for loop in loops {
                loop.execute {
                    if race.answered() {
                        timer.cancel()
                        race.settle(true)
                    }
                }
            }
        }
    }

    /// The loops' answers against the clock: the first to settle resumes the waiter, once.
    private final class Race: Sendable {
        private let continuation: CheckedContinuation<Bool, Never>
        private let needed: Int
        private let state = Mutex((answers: 0, settled: false))

        init(_ continuation: CheckedContinuation<Bool, Never>, answersNeeded: Int) {
            self.continuation = continuation
            needed = answersNeeded
        }

        /// One loop answered; true when it was the last one needed.
        func answered() -> Bool { state.withLock { $0.answers += 1; return $0.answers == needed } }

        func settle(_ value: Bool) {
            let first = state.withLock { state in
                defer { state.settled = true }
                return !state.settled
            }
            if first { continuation.resume(returning: value) }
        }
    }
}
