import Daemon
import FuzzSupport
import RouteSync

/// libFuzzer target for the daemon's request-target decoding: `/<path>?<query>` as it arrives on
/// the wire, read by the daemon's own `RequestTarget` (the path of a file request, and the
/// `?uri=` of `/_cenarius/resolve`) and checked by the uri rules before any file is looked up.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let target = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let path = RequestTarget.path(of: target)
    if path.hasPrefix("/"), let uri = try? URIPath(lookup: RequestTarget.fileName(String(path.dropFirst()))) {
        FuzzChecks.staysInside(uri)
    }
    if let parameter = RequestTarget.query(target, "uri"), let uri = try? URIPath(lookup: parameter) {
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
