import FuzzSupport
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer target for the solid pack's decoder (SolidPack): a first install's one stream, the
/// largest thing a device decodes from the remote. The input is the pack; the members are three
/// known files. Beyond "no crash": a member decoded whole has its own size and hash, none passes
/// its limit, and a member after a failed one never succeeds.
private let files: [[UInt8]] = [Array("first file\n".utf8), Array(repeating: 0x61, count: 300), []]
private let members = files.map { SolidPack.Member(expected: StreamingHasher.hash($0, .md5), limit: 512, destination: nil) }
private let path = "/tmp/fuzz-solid-pack-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard (try? FileSystem.writeAtomically(Array(UnsafeBufferPointer(start: data, count: size)), to: path, durable: false)) != nil else { return 0 }
    defer { unlink(path) }
    let results = SolidPack.decode(path, growing: nil, members: members)
    guard results.count == members.count else { fatalError("one result per member: \(results.count)") }
    var failed = false
    for (result, file) in zip(results, files) {
        switch result {
        case .success(let decoded):
            guard !failed, decoded == Int64(file.count) else { fatalError("a member decoded after a failure, or to another size: \(decoded)") }
        case .failure:
            failed = true
        }
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzSolidPack_main")
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
