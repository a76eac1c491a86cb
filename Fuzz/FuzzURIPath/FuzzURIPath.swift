import FuzzSupport
import RouteSync

/// libFuzzer target for the uri rules: whatever a lookup accepts stays inside its root once
/// joined and normalised, and the table and lookup forms agree.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURIPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let uri = try? URIPath(lookup: text) {
        FuzzChecks.staysInside(uri)
        // What a lookup produces is a valid table uri too.
        guard (try? URIPath(validating: uri.value)) != nil else { fatalError("lookup form not valid as a table uri: \(uri.value)") }
    }
    if let uri = try? URIPath(validating: text) {
        FuzzChecks.staysInside(uri)
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzURIPath_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in fuzzURIPath(data!, size) }
}
#else
@main
struct Replay {
    static func main() {
        FuzzReplay.run(fuzzURIPath)
    }
}
#endif
