import FuzzSupport
import RouteSync

/// libFuzzer target for the head (`Routes.head`, ReleaseHead): the one document a device polls.
/// Beyond "no crash": an accepted head's digests are SHA-256 hex, its sizes in range, its channel
/// a name, and it re-serialises to a head that parses back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let head = try? ReleaseHead.parse(bytes, source: "fuzz") else { return 0 }
    let digests = [head.table] + [head.tableForm, head.index].compactMap { $0 }
    guard digests.allSatisfy({ $0.utf8.count == 64 }), head.tableSize >= 0, head.tableSize <= ByteCount.limit,
          ReleaseHead.isChannel(head.channel) else {
        fatalError("accepted head out of range: \(String(decoding: head.serialized(), as: UTF8.self))")
    }
    guard (try? ReleaseHead.parse(head.serialized(), source: "again")) == head else {
        fatalError("accepted head does not round-trip: \(String(decoding: head.serialized(), as: UTF8.self))")
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzReleaseHead_main")
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
