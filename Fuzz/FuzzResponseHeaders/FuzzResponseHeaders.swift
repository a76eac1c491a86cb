import FuzzSupport
import RouteSync
import Transport

/// libFuzzer target for the response headers a sync reads (status line, `ETag`,
/// `Last-Modified`, `Retry-After`, `Content-Length`, `Accept-Ranges`), one line per input line as
/// libcurl hands them over. Beyond "no crash": every value kept is in its range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    var headers = ResponseHeaders()
    var start = 0
    for index in 0...size where index == size || input[index] == 0x0A {
        headers.consume(UnsafeRawBufferPointer(rebasing: input[start..<Swift.min(index + 1, size)]))
        start = index + 1
    }
    if let retryAfter = headers.retryAfter, !(retryAfter >= 0 && retryAfter <= HeaderValue.maxRetryAfter.value) {
        fatalError("Retry-After kept as \(retryAfter)")
    }
    if let length = headers.contentLength, ByteCount(exactly: length) == nil { fatalError("Content-Length kept as \(length)") }
    for validator in [headers.etag, headers.lastModified].compactMap({ $0 }) where validator.utf8.count > HeaderValue.maxValidatorBytes {
        fatalError("a validator of \(validator.utf8.count) bytes was kept")
    }
    // The policy that acts on a throttled answer, and the wait it leads to.
    let policy = RetryPolicy(attempts: 3, base: 1, cap: 30, maxRetryAfter: 30)
    if case .retry(let after) = policy.decide(.throttled("503", retryAfter: headers.retryAfter), attempt: 1, random: 0.5) {
        _ = Whole.sleepMilliseconds(after)
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzResponseHeaders_main")
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
