/// Memory a chunk of a log is read into: whole lines, handed from the thread that reads the file to
/// one that parses it, and back once the tally has taken the chunk in.
///
/// `@unchecked Sendable`: exactly one thread uses a buffer at a time; it changes hands only through
/// `Handoff` and the tally's `Mutex`, whose locks order every access before the next owner's.
final class ChunkBuffer: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer
    /// Bytes of whole lines at the start of `bytes`.
    var count = 0
    /// The chunk's place in the run.
    var index = 0
    /// The kind of log the chunk is from.
    var format = LogFormat.lines
    /// Lines too long to read (counted as lines, and as malformed) met before this chunk's.
    var overlong = 0

    init(capacity: Int) {
        bytes = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { bytes.deallocate() }

    var lines: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes.baseAddress, count: count) }
}
