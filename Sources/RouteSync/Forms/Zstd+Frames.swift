import CZstd

extension Zstd {
    /// The lengths of the zstd frames `bytes` holds one after another (a pack), told by libzstd
    /// from their headers and block headers without decoding them: a patch's frame cannot be
    /// decoded without its base. Nil when the bytes are not whole frames end to end (or libzstd
    /// cannot be loaded).
    package static func frameLengths(_ bytes: [UInt8]) -> [Int]? {
        guard isAvailable else { return nil }
        var lengths: [Int] = []
        var start = 0
        while start < bytes.count {
            let length = bytes.withUnsafeBytes { czstd_frame_size($0.baseAddress! + start, $0.count - start) }
            guard length > 0 else { return nil }
            lengths.append(length)
            start += length
        }
        return lengths
    }
}
