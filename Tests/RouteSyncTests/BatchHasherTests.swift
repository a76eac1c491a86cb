import CMultiMD5
import Crypto
import Foundation
import Testing
@testable import RouteSync
@testable import Transport

@Suite struct BatchHasherTests {
    func md5(_ bytes: [UInt8]) -> String {
        Insecure.MD5.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    func randomBytes(_ count: Int, _ generator: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count + 8)
        bytes.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: count, by: 8) { raw.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self) }
        }
        return Array(bytes.prefix(count))
    }

    /// Runs `body` once per kernel this CPU can run (AVX2, then AVX-512), each time with new
    /// lanes and copies of `messages` that outlive the calls (the lanes hold raw pointers into
    /// them); then goes back to the best kernel.
    func withEachKernel(_ messages: [[UInt8]], _ body: (Int32, MD5Lanes, [UnsafeRawBufferPointer]) throws -> Void) throws {
        let copies = messages.map { message in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, message.count), alignment: 1)
            message.withUnsafeBytes { copy.copyMemory(from: $0) }
            return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(copy)[..<message.count])
        }
        defer { copies.forEach { UnsafeMutableRawBufferPointer(mutating: $0).deallocate() } }
        let best = multimd5_level()
        defer { multimd5_set_level(best) }
        for level in 2...best {
            #expect(multimd5_set_level(level) == level)
            try body(level, try #require(MD5Lanes()), copies)
        }
    }

    /// Every length around the block and padding boundaries, in one batch so lanes refill.
    @Test(.enabled(if: multimd5_available() != 0, "the vector path needs AVX2; other CPUs hash one file at a time"))
    func vectorLanesMatchMD5AtEveryBoundary() throws {
        var generator = SystemRandomNumberGenerator()
        let lengths = Array(0...200) + [447, 448, 511, 512, 4095, 4096, 65_537, 1 << 20]
        let messages = lengths.map { randomBytes($0, &generator) }
        try withEachKernel(messages) { level, lanes, copies in
            let digests = lanes.run(copies.enumerated().map { ($0, $1) }, finish: true)
            #expect(digests.map(\.tag).sorted() == Array(messages.indices))
            for (tag, digest) in digests {
                #expect(digest.hex == md5(messages[tag]), "level \(level), length \(messages[tag].count)")
            }
            #expect(lanes.held == 0)
        }
    }

    /// Rounds that leave long messages in their lanes for the next round: every message comes
    /// back exactly once, with its own digest, and the last round (finish) empties the lanes.
    @Test(.enabled(if: multimd5_available() != 0, "the vector path needs AVX2"))
    func messagesKeptInTheLanesFinishInALaterRound() throws {
        var generator = SystemRandomNumberGenerator()
        // Log-normal-ish: mostly short, a few up to 300 KB, so rounds end with long ones running.
        let lengths = (0..<400).map { index in index % 23 == 0 ? 100_000 + index * 500 : (index * 7919) % 9000 }
        let messages = lengths.map { randomBytes($0, &generator) }
        try withEachKernel(messages) { level, lanes, copies in
            var seen: [Int: String] = [:]
            var carriedAtSomePoint = false
            for round in stride(from: 0, to: messages.count, by: 40) {
                let batch = (round..<min(round + 40, messages.count)).map { ($0, copies[$0]) }
                for (tag, digest) in lanes.run(batch, finish: false) {
                    #expect(seen.updateValue(digest.hex, forKey: tag) == nil, "tag \(tag) came back twice")
                }
                carriedAtSomePoint = carriedAtSomePoint || lanes.held > 0
                #expect(lanes.held < (level == 3 ? 16 : 8), "a lane ran dry before the round returned")
            }
            #expect(carriedAtSomePoint)
            for (tag, digest) in lanes.run([], finish: true) {
                #expect(seen.updateValue(digest.hex, forKey: tag) == nil, "tag \(tag) came back twice")
            }
            #expect(lanes.held == 0)
            #expect(seen.count == messages.count)
            for (tag, hex) in seen { #expect(hex == md5(messages[tag]), "level \(level), message \(tag)") }
        }
    }

    @Test func filesHashAsTheyDoOneAtATime() throws {
        let root = NSTemporaryDirectory() + "cenarius-batch-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var generator = SystemRandomNumberGenerator()
        var paths: [String] = []
        // Small, empty, one block, one larger than the buffered limit (streamed instead), and
        // enough at the limit to fill the buffer more than once.
        let full = BatchHasher.maxBufferedFile
        let sizes = [0, 1, 55, 56, 64, 1000, 70_000, full + 3] + Array(repeating: full, count: BatchHasher.bufferBytes / full + 1)
        for (index, size) in sizes.enumerated() {
            let path = "\(root)/f\(index)"
            try Data(randomBytes(size, &generator)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        try FileManager.default.createSymbolicLink(atPath: "\(root)/link", withDestinationPath: paths[1])
        let regular = paths.count
        paths += ["\(root)/missing", "\(root)/link", root]
        for algorithm in ContentHash.Algorithm.allCases {
            let batch = BatchHasher().hash(paths, algorithm: algorithm)
            #expect(batch.count == paths.count)
            // The reference must exist for every regular file: a nil on both sides would compare equal.
            for (path, result) in zip(paths.prefix(regular), batch.prefix(regular)) {
                let single = try FileSystem.hashFile(path, algorithm: algorithm)
                let batched = try #require(result, "\(algorithm) \(path)")
                #expect(batched.0 == single.0, "\(algorithm) \(path)")
                #expect(batched.1 == single.1, "\(algorithm) \(path)")
            }
            // Missing files, symlinks and folders are unreadable, not guessed, by either path.
            #expect(batch.suffix(3).allSatisfy { $0 == nil })
            for path in paths.suffix(3) {
                #expect(throws: (any Error).self, "\(path)") { try FileSystem.hashFile(path, algorithm: algorithm) }
            }
        }
    }

    @Test func hashAllKeepsOrderAcrossAlgorithmsAndThrowsForWhatCannotBeRead() throws {
        let root = NSTemporaryDirectory() + "cenarius-batch-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var files: [(path: String, algorithm: ContentHash.Algorithm)] = []
        for index in 0..<600 {
            let path = "\(root)/f\(index)"
            try Data(repeating: UInt8(index % 251), count: index * 7).write(to: URL(fileURLWithPath: path))
            files.append((path, index % 3 == 0 ? .sha256 : .md5))
        }
        let hashed = try BatchHasher().hashAll(files)
        #expect(hashed.count == files.count)
        for (file, result) in zip(files, hashed) {
            let single = try FileSystem.hashFile(file.path, algorithm: file.algorithm)
            #expect(result.0 == single.0 && result.1 == single.1, "\(file.path)")
        }
        #expect(throws: CenariusError.self) { try BatchHasher().hashAll(files + [("\(root)/missing", .md5)]) }
    }

    @Test func bodiesInHandHashLikeTheFileTheyWouldBe() {
        var generator = SystemRandomNumberGenerator()
        let sizes = [0, 3, 64, 65_536, BatchHasher.maxBufferedFile + 1, 200_000, 17]
        let bodies = sizes.map { size in
            let buffer = BodyBuffer(capacity: size)
            randomBytes(size, &generator).withUnsafeBytes { buffer.append($0) }
            return buffer
        }
        // Held as long as the lanes like, or never more than 100 KB (so the rounds finish what they hold).
        for (algorithm, limit) in ContentHash.Algorithm.allCases.flatMap({ a in [(a, 1 << 30), (a, 100_000)] }) {
            let hasher = BodyHasher<Int>(holdLimit: limit)
            // Two rounds that may keep bodies, then one that finishes them.
            var hashed = hasher.hash(bodies.prefix(4).enumerated().map { ($0, $1, algorithm) }, finish: false)
            if algorithm == .md5 && multimd5_available() != 0 {
                // Four bodies fill no lanes: the first round holds them all (65,603 bytes, under either limit).
                #expect(hasher.holding == 4, "limit \(limit)")
            }
            hashed += hasher.hash(bodies.dropFirst(4).enumerated().map { ($0 + 4, $1, algorithm) }, finish: false)
            // With the next three (1.2 MB more), the lower limit makes this round finish all.
            if limit < 200_000 { #expect(hasher.holding == 0, "limit \(limit)") }
            hashed += hasher.hash([], finish: true)
            #expect(hasher.holding == 0)
            #expect(hashed.map(\.item).sorted() == Array(bodies.indices))
            for (index, hash, size) in hashed {
                var single = StreamingHasher(algorithm)
                single.update(bodies[index].bytes)
                #expect(hash == single.finalize(), "\(algorithm) \(sizes[index]) bytes")
                #expect(size == Int64(sizes[index]))
            }
        }
    }
}
