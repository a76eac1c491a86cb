import Dispatch
import Foundation
import Synchronization
import Testing
@testable import RouteSync
@testable import Transport
import TestOrigin

/// A large object fetched as several Range requests at once (SlicedDownload): every byte lands
/// in its place, readers never see a byte before the whole prefix up to it is there, and the
/// ways a server or a connection can spoil a slice end in the whole object all the same.
@Suite(.awaitsCleanups) struct SlicedDownloadTests {
    let folder = NSTemporaryDirectory() + "cenarius-sliced-" + UUID().uuidString

    static let object: [UInt8] = {
        var state: UInt64 = 7
        return (0..<3_000_000).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 59) &+ 0x41
        }
    }()

    func origin() async throws -> TestOrigin {
        let origin = try await TestOrigin()
        Cleanups.add { [origin, folder] in
            await origin.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return origin
    }

    func job(_ origin: TestOrigin, _ path: String, size: Int) -> SlicedDownload.Job {
        SlicedDownload.Job(url: origin.url + "/" + path, destination: folder + "/object", size: Int64(size),
                           expected: StreamingHasher.hash(Self.object, .md5), label: path)
    }

    /// The requested ranges, parsed, in start order.
    func ranges(_ origin: TestOrigin, _ path: String) -> [(Int, Int)] {
        origin.requests(for: path).filter { $0.method == "GET" }.compactMap { request -> (Int, Int)? in
            guard let range = request.headers["range"], range.hasPrefix("bytes=") else { return nil }
            let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let start = Int(parts[0]) else { return nil }
            return (start, Int(parts[1]) ?? Self.object.count - 1)
        }.sorted { $0.0 < $1.0 }
    }

    @Test func theSlicesCoverTheObjectAndGrow() {
        let cuts = SlicedDownload.cuts(size: 3_000_000, slices: 16)
        #expect(cuts.count == 16 && cuts.first == 0)
        let sizes = zip(cuts, cuts.dropFirst() + [3_000_000]).map { $1 - $0 }
        #expect(sizes == sizes.sorted() && sizes.first! * 10 < sizes.last!, "each slice larger than the one before: \(sizes)")
        #expect(SlicedDownload.cuts(size: 100_000, slices: 16) == [0], "a small object is one request")
        #expect(SlicedDownload.cuts(size: 600_000, slices: 16).count == 6, "no slice much under 96 KiB")
        // An owner's form (SlicedForm): slices of its own size, under the pack's 512 KiB floor too.
        #expect(SlicedDownload.cuts(size: 372_488, slices: 8, sliceBytes: 64 << 10).count == 5)
        #expect(SlicedDownload.cuts(size: 420_000, slices: 8, sliceBytes: 64 << 10).count == 6)
        #expect(SlicedDownload.cuts(size: 4_000_000, slices: 8, sliceBytes: 64 << 10).count == 8, "no more slices than connections")
        #expect(SlicedDownload.cuts(size: 40_000, slices: 8, sliceBytes: 64 << 10) == [0])
    }

    /// Slices are taken in their order, although each is larger than the one before and sized
    /// files are taken largest first (FileQueue): the first slice's request must leave first.
    @Test func theFirstSliceIsAskedFirst() {
        let cuts = SlicedDownload.cuts(size: 3_000_000, slices: 16)
        let file = GrowingFile(path: folder + "/object", cuts: cuts)
        let slices = cuts.indices.map { i in
            let end = i + 1 < cuts.count ? cuts[i + 1] : 3_000_000
            var slice = FileDownload(url: "http://origin/big.pack", destination: folder + "/object", expected: StreamingHasher.hash(Self.object, .md5),
                                     label: "big.pack", size: end - cuts[i])
            slice.slice = .init(index: i, start: cuts[i], end: end, file: file)
            return slice
        }
        let queue = FileQueue(slices, maxBytes: .max, loops: 1)
        let taken = (0..<slices.count).compactMap { _ in queue.take()?.index }
        #expect(taken == Array(slices.indices))
        // Files with sizes, which are not slices, still go largest first.
        let files = slices.map { slice in
            var file = slice
            file.slice = nil
            return file
        }
        let sized = FileQueue(files, maxBytes: .max, loops: 1)
        #expect((0..<files.count).compactMap { _ in sized.take()?.index } == Array(files.indices.reversed()))
    }

    @Test func anObjectArrivesWholeInSlices() async throws {
        let origin = try await origin()
        origin.put("big.pack", Self.object)
        let download = SlicedDownload(options: TransferOptions(), cancel: nil)
        let file = download.start(job(origin, "big.pack", size: Self.object.count))
        let (failure, wire) = download.wait()
        #expect(failure == nil)
        #expect(wire == Int64(Self.object.count))
        #expect(file.wholePrefix == Int64(Self.object.count))
        #expect(FileManager.default.contents(atPath: folder + "/object").map(Array.init) == Self.object)
        let asked = ranges(origin, "big.pack")
        #expect(asked.count == SlicedDownload.maxSlices)
        // Back to back, from the first byte to the last.
        #expect(asked.first?.0 == 0 && asked.last?.1 == Self.object.count - 1)
        #expect(zip(asked, asked.dropFirst()).allSatisfy { $0.1 + 1 == $1.0 })
    }

    /// The first request is held back: the later slices are whole long before it, and a reader
    /// following the file must wait for the first instead of reading the hole before them.
    @Test func aReaderSeesOnlyTheWholePrefix() async throws {
        let origin = try await origin()
        let frame = try Zstd.compress(Self.object, level: 1)
        origin.put("frame.zst", frame)
        origin.inject(.delay(0.5), on: "frame.zst", times: 1)
        let download = SlicedDownload(options: TransferOptions(), cancel: nil)
        var slicedJob = job(origin, "frame.zst", size: frame.count)
        slicedJob.destination = folder + "/frame"
        let file = download.start(slicedJob)
        let decoding = FormDecoding(source: folder + "/frame", framesFollow: true, limit: Int64(Self.object.count),
                                    expected: StreamingHasher.hash(Self.object, .md5), growing: file)
        let decoded = Mutex<Result<Int64, FormFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let out = folder + "/decoded"
        DispatchQueue(label: "decode").async {
            let result = Result { () throws(FormFailure) in try decoding.decodeFrame(to: out).size }
            decoded.withLock { $0 = result }
            done.signal()
        }
        #expect(download.wait().failure == nil)
        file.finish()
        done.wait()
        #expect(decoded.withLock { $0 } == .success(Int64(Self.object.count)))
        #expect(file.waitsForMore > 0, "the reader waited at the end of the whole prefix")
    }

    @Test func aServerThatIgnoresRangesGivesTheFirstSliceEverything() async throws {
        let origin = try await origin()
        origin.put("big.pack", Self.object)
        origin.inject(.ignoresRanges, on: "big.pack")
        let download = SlicedDownload(options: TransferOptions(), cancel: nil)
        _ = download.start(job(origin, "big.pack", size: Self.object.count))
        #expect(download.wait().failure == nil)
        #expect(FileManager.default.contents(atPath: folder + "/object").map(Array.init) == Self.object)
    }

    @Test func aSliceCutShortIsResumedByRange() async throws {
        let origin = try await origin()
        origin.put("big.pack", Self.object)
        origin.inject(.truncate, on: "big.pack", times: 1)
        let download = SlicedDownload(options: TransferOptions(), cancel: nil)
        _ = download.start(job(origin, "big.pack", size: Self.object.count))
        #expect(download.wait().failure == nil)
        #expect(FileManager.default.contents(atPath: folder + "/object").map(Array.init) == Self.object)
        let asked = origin.requests(for: "big.pack")
        #expect(asked.count == SlicedDownload.maxSlices + 1)
        #expect(asked.contains { $0.headers["if-range"] != nil }, "the cut slice asked for the rest of itself")
    }

    @Test func aSliceThatFailsFailsTheDownloadByName() async throws {
        let origin = try await origin()
        origin.put("big.pack", Self.object)
        origin.inject(.status(404), on: "big.pack")
        let download = SlicedDownload(options: TransferOptions(), cancel: nil)
        let file = download.start(job(origin, "big.pack", size: Self.object.count))
        let failure = try #require(download.wait().failure)
        #expect(failure.message.contains("big.pack"))
        #expect(file.isFinished)
    }

    /// Connections opened before the object is known: the HEAD requests come first, then the slices.
    @Test func warmedConnectionsComeBeforeTheObjectIsNamed() async throws {
        let origin = try await origin()
        origin.put("Routes.head", "{}")
        origin.put("big.pack", Self.object)
        let download = SlicedDownload(options: TransferOptions(), warming: origin.url + "/Routes.head", cancel: nil)
        let deadline = Date().addingTimeInterval(10)
        while origin.requests(for: "Routes.head").count < SlicedDownload.maxSlices, Date() < deadline { usleep(2_000) }
        #expect(origin.requests(for: "Routes.head").allSatisfy { $0.method == "HEAD" })
        _ = download.start(job(origin, "big.pack", size: Self.object.count))
        #expect(download.wait().failure == nil)
        #expect(origin.requests.map(\.method) == Array(repeating: "HEAD", count: SlicedDownload.maxSlices) + Array(repeating: "GET", count: SlicedDownload.maxSlices))
    }

    /// Stopping the sync (SIGTERM) stops its prefetch too: nothing waits for the object.
    @Test func theSyncsCancelStopsTheSlices() async throws {
        let origin = try await origin()
        origin.put("big.pack", Self.object)
        origin.inject(.stall, on: "big.pack")
        let sync = CancelToken()
        let download = SlicedDownload(options: TransferOptions(), cancel: sync)
        let file = download.start(job(origin, "big.pack", size: Self.object.count))
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { sync.cancel() }
        let failure = try #require(download.wait().failure)
        #expect(Date().timeIntervalSince(started) < 5, "\(failure.message)")
        #expect(file.isFinished)
    }

    @Test func anAbandonedDownloadLeavesNothing() async throws {
        let origin = try await origin()
        origin.put("big.pack", Self.object)
        origin.inject(.delay(0.3), on: "big.pack")
        let download = SlicedDownload(options: TransferOptions(), cancel: nil)
        _ = download.start(job(origin, "big.pack", size: Self.object.count))
        download.abandon()
        #expect(!FileManager.default.fileExists(atPath: folder + "/object"))
    }
}
