import FuzzSupport
import RouteSync
import Settings

/// libFuzzer target for the config file (`--config`), checked as the command line checks it.
/// Beyond "no crash": every number accepted is finite and in its setting's range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let members = try? ConfigFile.check(bytes, path: "fuzz.json") else { return 0 }
    for (key, value) in members {
        guard case .number(let text) = value, let range = Settings.byKey[key]?.range else { continue }
        guard let number = Double(text), range.contains(number) else { fatalError("config \(key) = \(text) accepted") }
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzConfigFile_main")
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
