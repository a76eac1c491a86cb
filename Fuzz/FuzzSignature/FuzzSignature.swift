import FuzzSupport
import RouteSync

/// libFuzzer target for the signature sidecar (`Routes.json.sig`, both formats): an accepted
/// sidecar has a non-negative version and 64-byte signatures, and re-serialises to one that parses
/// back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let signature = try? TableSignature.parse(bytes, source: "fuzz") else { return 0 }
    guard signature.version >= 0, signature.signatures.allSatisfy({ $0.signature.count == 64 }) else {
        fatalError("sidecar accepted with version \(signature.version)")
    }
    guard let again = try? TableSignature.parse(signature.serialized(), source: "again") else {
        fatalError("accepted sidecar writes back unparseable: \(String(decoding: signature.serialized(), as: UTF8.self))")
    }
    // A sidecar that fits the first format is written in it, with the table's digest when it
    // names one (a first-format sidecar written before `table` existed names none, and writes
    // back naming none): equal in everything the message and the device use.
    let same = signature.isFirstFormat
        ? again.isFirstFormat && again.version == signature.version && again.signatures == signature.signatures && again.covers == signature.covers
        : again == signature
    guard same else {
        fatalError("accepted sidecar does not round-trip: \(String(decoding: signature.serialized(), as: UTF8.self))")
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzSignature_main")
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
