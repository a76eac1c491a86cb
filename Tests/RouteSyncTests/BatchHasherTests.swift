import CMultiMD5
import Crypto
import Foundation
import Testing
@testable import RouteSync

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

    /// Every length around the block and padding boundaries, in one batch so lanes refill.
    @Test(.enabled(if: multimd5_available() != 0, "the vector path needs AVX2; other CPUs hash one file at a time"))
    func vectorLanesMatchMD5AtEveryBoundary() throws {
        var generator = SystemRandomNumberGenerator()
        let lengths = Array(0...200) + [447, 448, 511, 512, 4095, 4096, 65_537, 1 << 20]
        let messages = lengths.map { randomBytes($0, &generator) }
        // Copies that outlive the call: the lanes hold raw pointers into them.
        let copies = messages.map { message in
            let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, message.count))
            pointer.initialize(from: message, count: message.count)
            return pointer
        }
        defer { copies.forEach { $0.deallocate() } }
        var jobs = zip(copies, messages).map { pointer, message in
            multimd5_job(data: pointer, length: message.count, digest: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        }
        // Each kernel this CPU can run (AVX2, then AVX-512), then back to the best.
        let best = multimd5_level()
        defer { multimd5_set_level(best) }
        for level in 2...best {
            #expect(multimd5_set_level(level) == level)
            jobs.withUnsafeMutableBufferPointer { multimd5_hash($0.baseAddress, $0.count) }
            for (job, message) in zip(jobs, messages) {
                let digest = withUnsafeBytes(of: job.digest) { Array($0) }
                #expect(StreamingHasher.hex(digest) == md5(message), "level \(level), length \(message.count)")
            }
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
        paths += ["\(root)/missing", "\(root)/link", root]
        for algorithm in ContentHash.Algorithm.allCases {
            let batch = BatchHasher().hash(paths, algorithm: algorithm)
            #expect(batch.count == paths.count)
            for (path, result) in zip(paths, batch) {
                let single = try? FileSystem.hashFile(path, algorithm: algorithm)
                #expect(result?.0 == single?.0, "\(algorithm) \(path)")
                #expect(result?.1 == single?.1, "\(algorithm) \(path)")
            }
            // Missing files, symlinks and folders are unreadable, not guessed.
            #expect(batch.suffix(3).allSatisfy { $0 == nil })
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

    @Test func bytesInHandHashLikeTheFileTheyWouldBe() {
        var generator = SystemRandomNumberGenerator()
        let bodies = [0, 3, 64, 65_536, BatchHasher.maxBufferedFile + 1].map { randomBytes($0, &generator) }
        for algorithm in ContentHash.Algorithm.allCases {
            let hashed = BatchHasher().hash(bodies.map { .bytes($0) }, algorithm: algorithm)
            for (body, result) in zip(bodies, hashed) {
                var single = StreamingHasher(algorithm)
                body.withUnsafeBytes { single.update($0) }
                #expect(result?.0 == single.finalize(), "\(algorithm) \(body.count) bytes")
                #expect(result?.1 == Int64(body.count))
            }
        }
    }
}
