import Daemon
import FuzzSupport

/// libFuzzer target for a D-Bus message from the system bus (the NetworkManager probe reads
/// whatever the bus socket gives). Beyond "no crash": a message is only parsed whole — its
/// stated length within the bytes given and its body exactly the length its header states.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let message = DBusMessage.parse(bytes[...]) else { return 0 }
    guard let length = DBusMessage.length(bytes[...]), length <= bytes.count else { fatalError("parsed a message longer than its bytes") }
    let stated = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
    guard message.body.count == stated else { fatalError("body of \(message.body.count) bytes, header says \(stated)") }
    _ = message.variantUInt32
    return 0
}

#if FUZZING
@_cdecl("FuzzDBusMessage_main")
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
