import FoundationEssentials
import FuzzSupport
import ResourceCache
import RouteSync
import Transport

/// libFuzzer target for the cache's own JSON records (release state, holds, pending release),
/// decoded as `status`, `verify` and the daemon decode them, then driven through what they feed:
/// the release machine's timers and the waits and texts `status` shows. A damaged or planted
/// record must read as nil or as values that never trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let decoder = JSONDecoder()
    let now = 1_800_000_000.0
    if let state = try? decoder.decode(ReleaseState.self, from: bytes) {
        var machine = ReleaseMachine(state: state, policy: nil, current: state.trial?.generation)
        if let trial = state.trial {
            _ = Whole.sleepMilliseconds(trial.deadline - now)
            _ = Whole.text(trial.deadline - trial.startedAt)
            _ = machine.deadlineReached(trial.generation, now: Swift.max(now, trial.deadline))
        }
        if let rollback = state.lastRollback { _ = Whole.clamped(now - rollback.at) }
    }
    if let holds = try? decoder.decode([Hold].self, from: bytes) {
        for hold in holds {
            _ = Whole.sleepMilliseconds(hold.expires - now)
            _ = Whole.clamped(hold.expires, to: 0...253_402_300_799)
        }
    }
    if let pending = try? decoder.decode(PendingRelease.self, from: bytes) {
        _ = pending.moment.map { Whole.clamped($0, to: 0...253_402_300_799) }
        _ = pending.place.map { Whole.clamped($0 * 1000) / 10 }
        _ = Whole.clamped(now - pending.checkedAt)
        _ = [pending.tableValidators.etag, pending.manifestValidators?.lastModified].compactMap { $0.flatMap(HeaderValue.validator) }
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzCacheRecords_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in fuzzOne(data!, size) }
}
#else
/// Without libFuzzer: replays corpus files given as arguments (a regression check).
@main
struct Replay {
    static func main() {
        FuzzReplay.run(fuzzOne)
    }
}
#endif
