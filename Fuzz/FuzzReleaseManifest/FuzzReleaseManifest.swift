import FuzzSupport
import RouteSync

/// libFuzzer target for the release manifest (`Routes.json.release`). Beyond "no crash": an
/// accepted manifest's numbers are in range, it re-serialises to a manifest that parses back
/// equal, and the rollout decision on it (moment arithmetic included) is finite.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let manifest = try? ReleaseManifest.parse(bytes, source: "fuzz") else { return 0 }
    guard (try? ReleaseManifest.parse(manifest.serialized(), source: "again")) == manifest else {
        fatalError("accepted manifest does not round-trip: \(String(decoding: manifest.serialized(), as: UTF8.self))")
    }
    if let rollout = manifest.rollout {
        let moment = RolloutGate.moment(rollout, place: 0.999_999)
        guard moment.isFinite, moment <= 2 * Seconds.limit, Int64(exactly: moment.rounded()) != nil else {
            fatalError("rollout moment \(moment) out of range")
        }
    }
    let device = RolloutGate.Device(id: "fuzz", native: try? NativeVersion("2.3.0"))
    if case .wait(let until) = RolloutGate.decide(manifest, release: manifest.release ?? "r", device: device, now: 1_800_000_000) {
        _ = Whole.sleepMilliseconds(until - 1_800_000_000)
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzReleaseManifest_main")
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
