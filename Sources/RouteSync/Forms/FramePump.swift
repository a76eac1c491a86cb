#if canImport(Glibc)
import Glibc
#endif

/// Feeds one zstd frame from a file to a decoder, 128 KiB at a time, and hands its output to a
/// sink: the loop a form, a pack's frame and a solid pack share. The file may still be growing (a
/// pack being downloaded): its end is waited past until the download is over.
enum FramePump {
    /// The file a frame is read from: its descriptor, its name for errors, and the download still
    /// writing it, if any.
    struct Input {
        let descriptor: Int32
        let name: String
        let growing: GrowingFile?
    }

    /// Returns the offset just past the frame. `framesFollow`: other frames follow this one (a
    /// pack); else bytes after the frame are an error.
    static func run(_ input: Input, offset: Int64, decoder: ZstdDecoder, framesFollow: Bool,
                    sink: (UnsafeRawBufferPointer) throws(FormFailure) -> Void) throws(FormFailure) -> Int64 {
        let chunk = 128 << 10
        let inBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        let outBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer {
            inBuffer.deallocate()
            outBuffer.deallocate()
        }
        var pump = State(position: offset, end: offset, finished: false)
        while true {
            let writerDone = input.growing?.isFinished ?? true
            let allowed = input.growing?.readable(from: pump.position, chunk) ?? chunk
            let got = allowed == 0 ? 0 : pread(input.descriptor, inBuffer.baseAddress, allowed, off_t(pump.position))
            guard got >= 0 else { throw .local("cannot read \(input.name): \(FileSystem.errnoText())") }
            if got == 0 {
                if let growing = input.growing, !writerDone {
                    growing.waitForMore()
                    continue
                }
                guard pump.finished else { throw .truncated }
                break
            }
            // Bytes after a complete frame: not a form this decoder wrote.
            if pump.finished { throw .truncated }
            pump.position += Int64(got)
            let read = UnsafeRawBufferPointer(rebasing: inBuffer[0..<got])
            if try pump.decode(read, decoder: decoder, into: outBuffer, framesFollow: framesFollow, sink: sink) { break }
        }
        return pump.end
    }

    /// Where the pump stands in the file and in the frame.
    private struct State {
        var position: Int64
        var end: Int64
        var finished: Bool

        /// Decodes what was just read (the bytes before `position`) until the decoder needs more;
        /// true when the frame ended and the frames that follow are not this pump's to read.
        mutating func decode(_ input: UnsafeRawBufferPointer, decoder: ZstdDecoder, into output: UnsafeMutableRawBufferPointer,
                             framesFollow: Bool, sink: (UnsafeRawBufferPointer) throws(FormFailure) -> Void) throws(FormFailure) -> Bool {
            var inPos = 0
            while inPos < input.count || !finished {
                var outPos = 0
                let before = inPos
                finished = try decoder.decode(input, &inPos, into: output, &outPos)
                if outPos > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<outPos])) }
                if finished {
                    end = position - Int64(input.count) + Int64(inPos)
                    if framesFollow { return true }
                    if inPos < input.count { throw .truncated }
                }
                // Needs more input (the output buffer was not filled).
                if inPos == input.count && outPos < output.count { break }
                if inPos == before && outPos == 0 { break }
            }
            return false
        }
    }
}
