#if canImport(Glibc)
import Glibc
#endif

/// A solid pack (a first install at one cross-file pack's size, B8 v2): the files a pack holds, in
/// the same order, each as its length (8 bytes, little-endian) then its bytes, compressed as one
/// zstd frame whose window is at most 16 MiB. Each file is compressed with the context of the files
/// before it — per-file frames lose it, and on real sites they are 1.14–1.22× one `tar | zstd` of
/// the site where this is 0.995× — and the frame still decodes streaming, file by file, while the
/// pack downloads (GrowingFile), in the window's memory. A broken download resumes by `Range` within
/// the sync; the decoder's state goes on where the bytes stopped.
package enum SolidPack {
    /// The largest window a solid pack may ask a device for (16 MiB): what its decoder allocates.
    package static let windowLog: Int32 = 24
    /// A publisher builds the stream in memory; past this the site gets no solid pack.
    package static let maxContent = 512 << 20

    /// `files` (each file's exact bytes, in pack order) compressed as a solid pack.
    package static func make(_ files: [[UInt8]]) throws(CenariusError) -> [UInt8] {
        var stream: [UInt8] = []
        stream.reserveCapacity(files.reduce(0) { $0 + 8 + $1.count })
        for file in files {
            var length = UInt64(file.count).littleEndian
            withUnsafeBytes(of: &length) { stream.append(contentsOf: $0) }
            stream.append(contentsOf: file)
        }
        return try Zstd.compress(stream, windowLog: min(windowLog, Zstd.windowLog(covering: Int64(stream.count))), long: true)
    }

    /// One file of the pack as the decoder wants it: its hash, the most bytes it may have, and where
    /// to write it (nil: decoded and checked, then dropped).
    package struct Member: Sendable {
        package var expected: ContentHash
        package var limit: Int64
        package var destination: String?

        package init(expected: ContentHash, limit: Int64, destination: String?) {
            self.expected = expected
            self.limit = limit
            self.destination = destination
        }
    }

    /// Decodes the pack at `source` (still downloading when `growing` is given) into its members,
    /// in order. One result per member: its size once whole and hashed to its hash, else why not;
    /// a failure fails every member after it too (the stream cannot be followed past it), and the
    /// files written before it stay good.
    package static func decode(_ source: String, growing: GrowingFile?, members: [Member]) -> [Result<Int64, FormFailure>] {
        var results: [Result<Int64, FormFailure>] = []
        var reader = RecordReader(members: members)
        let outcome = Result { () throws(FormFailure) in try run(source, growing: growing) { bytes throws(FormFailure) in try reader.take(bytes) } }
        reader.close()
        results = reader.results
        let failure: FormFailure? = switch outcome {
        case .failure(let error): error
        case .success: reader.finished ? nil : .truncated
        }
        while results.count < members.count { results.append(.failure(failure ?? .truncated)) }
        return results
    }

    /// Streams the frame's output to `sink`, reading the file as it grows.
    private static func run(_ source: String, growing: GrowingFile?, sink: (UnsafeRawBufferPointer) throws(FormFailure) -> Void) throws(FormFailure) {
        let input = growing?.open() ?? open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .local("cannot open \(source): \(FileSystem.errnoText())") }
        defer { close(input) }
        let decoder: ZstdDecoder
        do { decoder = try ZstdDecoder(windowLogMax: windowLog, prefix: nil) } catch { throw .local(error.message) }
        _ = try FramePump.run(FramePump.Input(descriptor: input, name: source, growing: growing), offset: 0, decoder: decoder, framesFollow: false, sink: sink)
    }

    /// Cuts the decoded stream into its length-prefixed files, writing and hashing each.
    private struct RecordReader {
        let members: [Member]
        var results: [Result<Int64, FormFailure>] = []
        private var header: [UInt8] = []
        private var remaining: Int64 = 0
        private var size: Int64 = 0
        private var inBody = false
        private var output: Int32 = -1
        private var hasher: StreamingHasher?

        init(members: [Member]) {
            self.members = members
        }

        /// Every member read whole, and nothing begun after the last.
        var finished: Bool { results.count == members.count && !inBody && header.isEmpty }

        mutating func take(_ bytes: UnsafeRawBufferPointer) throws(FormFailure) {
            var at = 0
            while at < bytes.count {
                if !inBody {
                    guard results.count < members.count else { throw .corrupt("the solid pack holds more files than its index says") }
                    let need = 8 - header.count
                    let taken = min(need, bytes.count - at)
                    header.append(contentsOf: bytes[at..<(at + taken)])
                    at += taken
                    if header.count == 8 { try begin() }
                    continue
                }
                let taken = Int(min(remaining, Int64(bytes.count - at)))
                let slice = UnsafeRawBufferPointer(rebasing: bytes[at..<(at + taken)])
                hasher?.update(slice)
                if output >= 0, !FileSystem.writeAll(output, slice) { throw .local("cannot write the decoded file: \(FileSystem.errnoText())") }
                remaining -= Int64(taken)
                at += taken
                if remaining == 0 { try end() }
            }
        }

        private mutating func begin() throws(FormFailure) {
            let length = header.withUnsafeBytes { Int64(bitPattern: UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) }
            header.removeAll(keepingCapacity: true)
            let member = members[results.count]
            guard length >= 0, length <= member.limit else { throw .overrun(limit: member.limit) }
            if let destination = member.destination {
                output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard output >= 0 else { throw .local("cannot create \(destination): \(FileSystem.errnoText())") }
            }
            hasher = StreamingHasher(member.expected.algorithm)
            size = length
            remaining = length
            inBody = true
            if remaining == 0 { try end() }
        }

        private mutating func end() throws(FormFailure) {
            let member = members[results.count]
            let actual = hasher?.finalize()
            inBody = false
            if output >= 0 { Glibc.close(output) }
            output = -1
            guard actual == member.expected else {
                if let destination = member.destination { unlink(destination) }
                throw .wrongHash(expected: member.expected, actual: actual ?? member.expected)
            }
            results.append(.success(size))
        }

        /// A file cut short by a failure is removed.
        mutating func close() {
            guard output >= 0 else { return }
            Glibc.close(output)
            output = -1
            if inBody, let destination = members[results.count].destination { unlink(destination) }
        }
    }
}
