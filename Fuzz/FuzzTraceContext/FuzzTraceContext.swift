import FuzzSupport
import Telemetry

/// libFuzzer target for what a caller of the control API sends as `traceparent`, and the
/// `k=v,k=v` lists of `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_EXPORTER_OTLP_HEADERS`. Beyond "no
/// crash": an accepted traceparent prints back as exactly the text it came from (ids are lower
/// hex), and a list's keys are never empty.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let context = SpanContext(traceparent: text) {
        let flags = text.utf8.suffix(2)
        let printed = context.traceparent
        // The flags other than "sampled" are not kept: compare the rest.
        guard printed.utf8.dropLast(2).elementsEqual(text.utf8.dropLast(2)), flags.count == 2 else {
            fatalError("traceparent \(text) came back as \(printed)")
        }
    }
    for pair in TraceSettings.pairs(text) where pair.key.isEmpty {
        fatalError("an empty key from \(text)")
    }
    return 0
}

#if FUZZING
@_cdecl("FuzzTraceContext_main")
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
