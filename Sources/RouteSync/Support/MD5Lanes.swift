import CMultiMD5

/// MD5 of many messages side by side in the vector lanes (CMultiMD5). The lanes outlive a call:
/// without `finish`, messages still running when the inputs run out stay in their lanes and go
/// on beside the next call's, so the vector unit is not left hashing one long message while
/// the other lanes idle (the cost of a round ending, paid once per download instead of per round).
package final class MD5Lanes {
    private let lanes: OpaquePointer
    private var outputs: [multimd5_output] = []

    /// nil on a CPU without the vector kernels.
    package init?() {
        guard let lanes = multimd5_lanes_create() else { return nil }
        self.lanes = lanes
    }

    deinit { multimd5_lanes_destroy(lanes) }

    /// Messages started and not yet finished.
    var held: Int { Int(multimd5_lanes_held(lanes)) }

    /// Starts `messages`, longest first (so that lanes run dry at about the same time), and returns
    /// the digest of every message that finished, by tag: with `finish`, all of them. A message's
    /// bytes must stay where they are until its tag comes back.
    package func run(_ messages: [(tag: Int, bytes: UnsafeRawBufferPointer)], finish: Bool) -> [(tag: Int, digest: ContentHash)] {
        let inputs = messages.sorted { $0.bytes.count > $1.bytes.count }.map {
            multimd5_input(data: $0.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), length: $0.bytes.count, tag: UInt64($0.tag))
        }
        let room = inputs.count + 16
        if outputs.count < room { outputs = Array(repeating: multimd5_output(), count: room) }
        let done = outputs.withUnsafeMutableBufferPointer { out in
            inputs.withUnsafeBufferPointer { multimd5_lanes_run(lanes, $0.baseAddress, $0.count, finish ? 1 : 0, out.baseAddress) }
        }
        return outputs[..<done].map { output in
            (Int(output.tag), ContentHash(hex: withUnsafeBytes(of: output.digest) { StreamingHasher.hex($0) })!)
        }
    }
}
