import FuzzSupport
import RouteSync

/// libFuzzer target for the daemon's request-target decoding: `/<path>?<query>` as it arrives on
/// the wire, split and decoded the way `serve` does before any file is looked up.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let target = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    guard path.hasPrefix("/") else { return 0 }
    if let uri = try? URIPath(lookup: String(path.dropFirst())) {
        FuzzChecks.staysInside(uri)
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzRequestPath_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in fuzzRequestPath(data!, size) }
}
#else
@main
struct Replay {
    static func main() {
        FuzzReplay.run(fuzzRequestPath)
    }
}
#endif
