#if canImport(Glibc)
import Glibc
#endif

/// Turns a downloaded form back into the file (a zstd frame, perhaps a patch against a base the
/// device holds, perhaps a member of a pack), streaming: the output is hashed as it is written and
/// its size checked against `limit` as it is produced, so a small frame that inflates to gigabytes
/// stops at the limit. Memory: two 128 KiB buffers, the decoder's window (bounded by the window log
/// the caller allows) and the base, mapped read-only for the frame's duration.
package struct FormDecoding: Sendable {
    /// The form: a file, and where in it the frame starts (a pack's frames follow one another).
    package var source: String
    package var offset: Int64 = 0
    /// True in a pack: other frames follow this one, and decoding says where it ended. False:
    /// the frame must be the whole file, and trailing bytes are an error.
    package var framesFollow = false
    /// A patch's base (a verified object or preset file); nil for a plain compressed form.
    package var base: String?
    /// The most bytes the output may have (the smaller of the entry's size and --max-file-size).
    package var limit: Int64
    package var expected: ContentHash
    /// Set while `source` is still being downloaded: its end is waited past until the download is over.
    package var growing: GrowingFile?

    package init(source: String, offset: Int64 = 0, framesFollow: Bool = false, base: String? = nil, limit: Int64, expected: ContentHash,
                 growing: GrowingFile? = nil) {
        self.growing = growing
        self.source = source
        self.offset = offset
        self.framesFollow = framesFollow
        self.base = base
        self.limit = limit
        self.expected = expected
    }

    /// The largest window a frame of this product may ask for: enough for the base and the file,
    /// never more (PLATFORM-NOTES: ZSTD_d_windowLogMax as low as the largest allowed file needs).
    package static func windowLogMax(limit: Int64, baseSize: Int64) -> Int32 {
        max(Zstd.windowLog(covering: limit + baseSize), 10)
    }

    /// Writes the file to `destination` (created or truncated) and returns its size once it is
    /// whole and hashes to `expected`; on any failure `destination` is removed.
    package func decode(to destination: String) throws(FormFailure) -> Int64 {
        try decodeFrame(to: destination).size
    }

    /// As `decode`, also giving the offset just past the frame (where a pack's next frame starts).
    package func decodeFrame(to destination: String) throws(FormFailure) -> (size: Int64, end: Int64) {
        let input = growing?.open() ?? open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .local("cannot open \(source): \(FileSystem.errnoText())") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw .local("cannot create \(destination): \(FileSystem.errnoText())") }
        do {
            let decoded = try withBase { (prefix) throws(FormFailure) -> (Int64, Int64) in
                try run(input: input, output: output, prefix: prefix)
            }
            close(output)
            return decoded
        } catch {
            close(output)
            unlink(destination)
            throw error
        }
    }

    private func withBase<T>(_ body: (UnsafeRawBufferPointer?) throws(FormFailure) -> T) throws(FormFailure) -> T {
        guard let base else { return try body(nil) }
        let fd = open(base, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .local("cannot open base \(base): \(FileSystem.errnoText())") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .local("cannot stat base \(base)") }
        let size = Int(info.st_size)
        guard size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            throw .local("cannot map base \(base): \(FileSystem.errnoText())")
        }
        defer { munmap(mapped, size) }
        return try body(UnsafeRawBufferPointer(start: mapped, count: size))
    }

    private func run(input: Int32, output: Int32, prefix: UnsafeRawBufferPointer?) throws(FormFailure) -> (Int64, Int64) {
        let decoder: ZstdDecoder
        do {
            decoder = try ZstdDecoder(windowLogMax: Self.windowLogMax(limit: limit, baseSize: Int64(prefix?.count ?? 0)),
                                      prefix: prefix?.count == 0 ? nil : prefix)
        } catch { throw .local(error.message) }
        var hasher = StreamingHasher(expected.algorithm)
        var produced: Int64 = 0
        let end = try FramePump.run(FramePump.Input(descriptor: input, name: source, growing: growing), offset: offset, decoder: decoder,
                                    framesFollow: framesFollow) { (written: UnsafeRawBufferPointer) throws(FormFailure) in
            produced += Int64(written.count)
            // Checked as output is produced: nothing past the limit is written.
            guard produced <= limit else { throw .overrun(limit: limit) }
            hasher.update(written)
            guard FileSystem.writeAll(output, written) else { throw .local("cannot write the decoded file: \(FileSystem.errnoText())") }
        }
        let actual = hasher.finalize()
        guard actual == expected else { throw .wrongHash(expected: expected, actual: actual) }
        return (produced, end)
    }
}
