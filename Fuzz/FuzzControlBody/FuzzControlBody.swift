import Daemon
import FuzzSupport
import RouteSync

/// libFuzzer target for the control API's JSON bodies (`POST /_cenarius/hold`, `/ready`), read
/// as the router reads them. Beyond "no crash": a value accepted is in the range asked for.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let body = try? ControlBody(bytes, example: "{}") else { return 0 }
    if let ttl = try? body.seconds("ttl", in: 1...604_800), !(1...604_800).contains(ttl.value) { fatalError("ttl \(ttl) accepted") }
    if let generation = try? body.whole("generation", in: 0...Int(Int32.max)), generation < 0 { fatalError("generation \(generation) accepted") }
    if let reason = try? body.string("reason", maxBytes: 1024), reason.utf8.count > 1024 { fatalError("long reason accepted") }
    return 0
}

#if FUZZING
@_cdecl("FuzzControlBody_main")
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
