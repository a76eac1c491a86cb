extension Zstd {
    /// The lengths of the zstd frames `bytes` holds one after another (a pack), told from their
    /// headers and block headers without decoding them (RFC 8878, 3.1.1): a patch's frame cannot
    /// be decoded without its base. Nil when the bytes are not whole frames end to end.
    package static func frameLengths(_ bytes: [UInt8]) -> [Int]? {
        var lengths: [Int] = []
        var start = 0
        while start < bytes.count {
            guard let length = frameLength(bytes, at: start) else { return nil }
            lengths.append(length)
            start += length
        }
        return lengths
    }

    /// The length of the frame at `start`, or nil.
    private static func frameLength(_ bytes: [UInt8], at start: Int) -> Int? {
        guard bytes.count - start >= 6, bytes[start] == 0x28, bytes[start + 1] == 0xB5, bytes[start + 2] == 0x2F, bytes[start + 3] == 0xFD else { return nil }
        let descriptor = bytes[start + 4]
        let singleSegment = descriptor & 0x20 != 0
        // The window descriptor, the dictionary id and the content size, as the descriptor says.
        var position = start + 5 + (singleSegment ? 0 : 1)
        position += [0, 1, 2, 4][Int(descriptor & 3)]
        position += [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        while true {
            guard bytes.count - position >= 3 else { return nil }
            let header = Int(bytes[position]) | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2]) << 16
            let kind = header >> 1 & 3
            guard kind != 3 else { return nil }
            // An RLE block holds one byte, repeated; raw and compressed blocks their size.
            position += 3 + (kind == 1 ? 1 : header >> 3)
            if header & 1 != 0 { break }
        }
        if descriptor & 4 != 0 { position += 4 }
        return position <= bytes.count ? position - start : nil
    }
}
