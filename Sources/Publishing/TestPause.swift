#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// A test hook of the publisher journeys (`CENARIUS_TEST_PAUSE_BEFORE=<step>` with
/// `CENARIUS_TEST_PAUSE_FILE=<path>`): at that step the process creates `<path>.reached` and waits
/// while `<path>` exists, so that a test can run a second publisher at exactly that point. Steps:
/// `locked`, the upload plan's phases (`PlanRunner.Phase`), `lease-write` (a store without
/// conditional writes, between reading that no lease is live and writing its own: a slow claim),
/// `lease-settle` (its lease written, before it is read back), and `early-store` (the store objects about to be written before the lease is confirmed).
/// With `CENARIUS_TEST_TRACE` set, every step reached, and the others of `trace`, is written to
/// stderr as `cenarius-trace <Unix seconds> <step>`: where a publish's time goes, beside a
/// store's request log (bench/b9.py's timeline).
package enum TestPause {
    package static func at(_ step: String) {
        trace(step)
        guard let wanted = getenv("CENARIUS_TEST_PAUSE_BEFORE").map({ String(cString: $0) }), wanted == step,
              let path = getenv("CENARIUS_TEST_PAUSE_FILE").map({ String(cString: $0) }) else { return }
        try? FileSystem.writeAtomically(Array(step.utf8), to: path + ".reached", durable: false)
        while FileSystem.exists(path) { usleep(20_000) }
    }

    package static func trace(_ step: String) {
        guard getenv("CENARIUS_TEST_TRACE") != nil else { return }
        let line = Array("cenarius-trace \(FileSystem.now()) \(step)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
