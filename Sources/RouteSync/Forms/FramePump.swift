#if canImport(Glibc)
import Glibc
#endif

/// Feeds one zstd frame from a file to a decoder, 128 KiB at a time, and hands its output to a
/// sink: the loop a form, a pack's frame and a solid pack share. The file may still be growing (a
/// pack being downloaded): its end is waited past until the download is over.
enum FramePump {
    /// Returns the offset just past the frame. `framesFollow`: other frames follow this one (a
    /// pack); else bytes after the frame are an error.
    static func run(_ input: Int32, source: String, offset: Int64, growing: GrowingFile?, decoder: ZstdDecoder, framesFollow: Bool,
                    sink: (UnsafeRawBufferPointer) throws(FormFailure) -> Void) throws(FormFailure) -> Int64 {
        let chunk = 128 << 10
        let inBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        let outBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer {
            inBuffer.deallocate()
            outBuffer.deallocate()
        }
        var position = offset
        var end = offset
        var finished = false
        reading: while true {
            let writerDone = growing?.isFinished ?? true
            let allowed = growing?.readable(from: position, chunk) ?? chunk
            let got = allowed == 0 ? 0 : pread(input, inBuffer.baseAddress, allowed, off_t(position))
            guard got >= 0 else { throw .local("cannot read \(source): \(FileSystem.errnoText())") }
            if got == 0 {
                if let growing, !writerDone {
                    growing.waitForMore()
                    continue
                }
                guard finished else { throw .truncated }
                break
            }
            // Bytes after a complete frame: not a form this decoder wrote.
            if finished { throw .truncated }
            position += Int64(got)
            let input = UnsafeRawBufferPointer(rebasing: inBuffer[0..<got])
            var inPos = 0
            while inPos < got || !finished {
                var outPos = 0
                let before = inPos
                finished = try decoder.decode(input, &inPos, into: outBuffer, &outPos)
                if outPos > 0 { try sink(UnsafeRawBufferPointer(rebasing: outBuffer[0..<outPos])) }
                if finished {
                    end = position - Int64(got) + Int64(inPos)
                    if framesFollow { break reading }
                    if inPos < got { throw .truncated }
                }
                // Needs more input (the output buffer was not filled).
                if inPos == got && outPos < chunk { break }
                if inPos == before && outPos == 0 { break }
            }
        }
        return end
    }
}
