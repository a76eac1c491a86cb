import Dispatch
import Foundation
import Synchronization
import Testing
@testable import RouteSync

/// A pack's frames are decoded while the pack is still arriving (GrowingFile): a reader that
/// reaches the end of what was written waits for the writer instead of calling the frame cut
/// short, and once the writer is done the end is the end.
@Suite struct GrowingFileTests {
    let folder = NSTemporaryDirectory() + "cenarius-growing-" + UUID().uuidString

    /// Decodes `form` while it is written in two halves, `pause` apart; the decoder starts before
    /// the file exists. `complete`: whether the second half is ever written.
    func decodeWhileWritten(_ form: [UInt8], expected: [UInt8], complete: Bool) throws -> (Result<Int64, FormFailure>, waited: Bool) {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/pack.form"
        let growing = GrowingFile(path: path)
        let decoding = FormDecoding(source: path, framesFollow: true, limit: Int64(expected.count),
                                    expected: StreamingHasher.hash(expected, .md5), growing: growing)
        let out = folder + "/out"
        let result = Mutex<Result<Int64, FormFailure>?>(nil)
        let group = DispatchGroup()
        DispatchQueue(label: "decode").async(group: group) {
            let decoded = Result { () throws(FormFailure) in try decoding.decodeFrame(to: out).size }
            result.withLock { $0 = decoded }
        }
        let half = form.count / 2
        let deadline = Date().addingTimeInterval(30)
        while growing.waitsForFile == 0, Date() < deadline { usleep(1_000) }
        #expect(growing.waitsForFile > 0, "the decoder waits for the file to appear")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: form[..<half])
        // Half a frame in the file: the decoder reads it, reaches its end and waits for the rest
        // (it does not fail). Polled, with a generous deadline, not slept on.
        while growing.waitsForMore == 0, result.withLock({ $0 == nil }), Date() < deadline { usleep(1_000) }
        let waited = growing.waitsForMore > 0 && result.withLock { $0 == nil }
        if complete { try handle.write(contentsOf: form[half...]) }
        try handle.close()
        growing.finish()
        group.wait()
        return (try #require(result.withLock { $0 }), waited)
    }

    @Test func aFrameIsDecodedAsItsBytesArrive() throws {
        let file = bundle(seed: 11, bytes: 400_000)
        let form = try Zstd.compress(file)
        let (result, waited) = try decodeWhileWritten(form, expected: file, complete: true)
        #expect(waited)
        #expect(result == .success(Int64(file.count)))
    }

    @Test func aFrameWhoseWriterStopsHalfWayIsTruncated() throws {
        let file = bundle(seed: 12, bytes: 400_000)
        let form = try Zstd.compress(file)
        let (result, waited) = try decodeWhileWritten(form, expected: file, complete: false)
        #expect(waited)
        #expect(result == .failure(.truncated))
    }
}
