import FuzzSupport
import Publishing

/// libFuzzer target for an S3-compatible store's listing (ListObjectsV2), which `publish` and
/// `prune` decide by. Beyond "no crash": every object read has a key and a size from 0 up, and a
/// continuation token is never empty (an empty one would list the first page for ever).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let listing = S3Listing(Array(UnsafeBufferPointer(start: data, count: size)))
    for (key, object) in listing.objects where key.isEmpty || object.size < 0 {
        fatalError("listing accepted an object without a key or with a negative size: \(key) \(object.size)")
    }
    if listing.next == "" { fatalError("an empty continuation token") }
    return 0
}

#if FUZZING
@_cdecl("FuzzS3Listing_main")
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
