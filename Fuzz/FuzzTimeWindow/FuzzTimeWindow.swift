import FuzzSupport
import ResourceCache

/// libFuzzer target for an install policy's window (`--download-window`, `--switch-window`: from
/// flags, the environment or a config file). Beyond "no crash": an accepted window opens — it has
/// a next opening within a week of any moment, and it contains the minute after that opening.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let window = try? TimeWindow(text) else { return 0 }
    let now = 1_795_662_600.0 + Double(size % 7) * 86_400 + Double(size % 1440) * 60
    guard !window.days.isEmpty, let opening = window.nextOpening(after: now), opening > now, opening <= now + 8 * 86_400 else {
        fatalError("accepted window \(text) never opens")
    }
    guard window.contains(opening + 1) else { fatalError("window \(text) does not contain its own opening") }
    return 0
}

#if FUZZING
@_cdecl("FuzzTimeWindow_main")
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
