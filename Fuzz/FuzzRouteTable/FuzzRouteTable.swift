import FuzzSupport
import RouteSync

/// libFuzzer target for the route-table, signature and rotation-statement parsers. Properties checked beyond "no
/// crash": an accepted table re-serialises to a table that parses back equal, and every uri in it
/// obeys the uri rules.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRouteTable(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? TableSignature.parse(bytes, source: "fuzz")
    _ = try? KeyRotation.parse(bytes, source: "fuzz")
    guard let table = try? RouteTable.parse(bytes, source: "fuzz") else { return 0 }
    guard let again = try? RouteTable.parse(table.serialized(), source: "again"), Set(again.entries) == Set(table.entries) else {
        fatalError("accepted table does not round-trip")
    }
    for entry in table.entries where (try? URIPath(validating: entry.uri.value)) == nil {
        fatalError("table accepted an invalid uri \(entry.uri.value)")
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzRouteTable_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in fuzzRouteTable(data!, size) }
}
#else
/// Without libFuzzer: replays corpus files given as arguments (a regression check).
@main
struct Replay {
    static func main() {
        FuzzReplay.run(fuzzRouteTable)
    }
}
#endif
