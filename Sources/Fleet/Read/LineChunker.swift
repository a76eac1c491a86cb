#if canImport(Glibc)
import Glibc
#endif
import RouteSync

/// Cuts a log into chunks of whole lines, about `chunkBytes` each, so that each can be parsed on
/// its own thread. A line longer than `maxLine` is not kept: it counts as one malformed line and is
/// skipped to its newline, so memory stays at the buffers whatever the file holds.
struct LineChunker {
    let chunkBytes: Int
    let maxLine: Int
    /// The start of a line the last chunk could not end.
    private var carry: [UInt8] = []
    private var skipping = false
    private var overlong = 0

    init(chunkBytes: Int, maxLine: Int) {
        self.chunkBytes = max(1, chunkBytes)
        self.maxLine = maxLine
    }

    /// The size a buffer must have.
    var capacity: Int { chunkBytes + maxLine + 1 }

    /// Fills `buffer` with whole lines from `file` (the file's last line may lack its newline);
    /// false once the file is done, when `buffer` may still hold its last lines.
    mutating func fill(_ buffer: ChunkBuffer, from file: inout LogFile) throws(CenariusError) -> Bool {
        let base = buffer.bytes.baseAddress!
        var filled = carry.count
        carry.withUnsafeBytes { if filled > 0 { base.copyMemory(from: $0.baseAddress!, byteCount: filled) } }
        carry.removeAll(keepingCapacity: true)
        buffer.count = 0
        while true {
            let got = try file.read(into: base + filled, count: min(chunkBytes, capacity - filled))
            if got == 0 {
                skipping = false
                buffer.count = filled
                buffer.overlong = take()
                return false
            }
            var fresh = base + filled
            var freshCount = got
            if skipping {
                guard let newline = memchr(fresh, Int32(UInt8(ascii: "\n")), freshCount) else { continue }
                let past = fresh.distance(to: newline) + 1
                skipping = false
                fresh += past
                freshCount -= past
                memmove(base + filled, fresh, freshCount)
            }
            filled += freshCount
            if let end = Self.pastLastNewline(base, filled) {
                if filled - end > maxLine {
                    startSkipping()
                } else {
                    carry.append(contentsOf: UnsafeRawBufferPointer(start: base + end, count: filled - end))
                }
                buffer.count = end
                buffer.overlong = take()
                return true
            }
            if filled > maxLine {
                startSkipping()
                filled = 0
            }
        }
    }

    /// Just past the last newline in the first `count` bytes (a line is ~150 bytes: a short walk back).
    private static func pastLastNewline(_ base: UnsafeMutableRawPointer, _ count: Int) -> Int? {
        var index = count
        while index > 0 {
            if base.load(fromByteOffset: index - 1, as: UInt8.self) == UInt8(ascii: "\n") { return index }
            index -= 1
        }
        return nil
    }

    private mutating func startSkipping() {
        skipping = true
        overlong += 1
    }

    private mutating func take() -> Int {
        defer { overlong = 0 }
        return overlong
    }
}
