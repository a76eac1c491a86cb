import Testing
@testable import Daemon
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LivenessTests {
    @Test func aSyncWithoutProgressOrAnOverdueTimerIsStuck() {
        let liveness = Liveness(stallLimit: 10)
        #expect(liveness.stuck() == nil)
        liveness.progressed()
        let start = FileSystem.monotonic()
        #expect(liveness.stuck(now: start + 5) == nil)
        #expect(liveness.stuck(now: start + 11)?.contains("no progress") == true)
        liveness.progressed()
        #expect(liveness.stuck(now: FileSystem.monotonic() + 5) == nil)
        liveness.synced()
        #expect(liveness.stuck(now: start + 1000) == nil)
        liveness.waiting(for: 60)
        #expect(liveness.stuck(now: FileSystem.monotonic() + 65) == nil)
        #expect(liveness.stuck(now: FileSystem.monotonic() + 75)?.contains("overdue") == true)
        liveness.woke()
        #expect(liveness.stuck(now: FileSystem.monotonic() + 75) == nil)
        // --timeout 30 watched every 15 s: 165 s.
        #expect(Liveness(timeout: 30, period: 15).stallLimit == 165)
    }

    @Test func theWatchdogPeriodIsHalfOfWhatSystemdAsksAndOnlyForThisProcess() {
        func period(_ env: [String: String]) -> Double? { SystemdNotifier.watchdogPeriod { env[$0] } }
        #expect(period(["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000"]) == 15)
        #expect(period(["WATCHDOG_USEC": "30000000"]) == nil)
        #expect(period(["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "0"]) == nil)
        #expect(period(["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "x"]) == nil)
        #expect(period(["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"]) == nil)
        #expect(period(["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"]) == 15)
    }
}
