import Foundation
import Synchronization
import Testing
import ResourceCache
@testable import RouteSync
@testable import Transport
import TestOrigin

/// A large download runs several loops (threads with their own multi handles) that share one
/// queue of files and one set of check workers (Downloader.download).
@Suite(.awaitsCleanups) struct DownloadLoopTests {
    /// Deterministic bodies of web-build-like sizes, a few streamed (over 1 MiB) and one empty.
    static func files(_ count: Int, version: UInt8) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = ["f/empty.bin": []]
        for i in 0..<count {
            let size = (i &* 7919) % 150_000 + (i % 97 == 0 ? 1_100_000 : 0)
            files["f/\(i).bin"] = [UInt8](unsafeUninitializedCapacity: size) { bytes, count in
                for n in 0..<size { bytes[n] = UInt8(truncatingIfNeeded: n &* 31 &+ i &+ Int(version)) }
                count = size
            }
        }
        return files
    }

    @Test func everyFileArrivesOnceAndVerifiedAcrossSeveralLoops() async throws {
        var f = try await Fixture.registered()
        f.settings.transfer.loops = 3
        f.settings.transfer.connections = 6
        let files = Self.files(300, version: 1)
        _ = f.origin.publish(files)
        // Transient faults, each retried by whichever loop holds the file.
        f.origin.inject(.status(500), on: "f/7.bin", times: 1)
        f.origin.inject(.truncate, on: "f/97.bin", times: 1)
        f.origin.inject(.drop, on: "f/201.bin", times: 1)
        let last = Mutex(TransferProgress())
        let report = try f.syncer.sync(progress: { progress in last.withLock { $0 = progress } })
        #expect(report.downloadedFiles == files.count)
        for (uri, body) in files {
            #expect(FileManager.default.contents(atPath: try f.resolve(uri).path).map(Array.init) == body, "\(uri)")
        }
        let counts = Dictionary(grouping: f.fileRequests, by: { $0 }).mapValues(\.count)
        #expect(counts.count == files.count)
        #expect(counts.filter { $0.value != 1 }.keys.sorted() == ["f/201.bin", "f/7.bin", "f/97.bin"])
        let total = files.values.reduce(0) { $0 + Int64($1.count) }
        #expect(last.withLock { $0.filesDone == files.count && $0.filesTotal == files.count && $0.bytes == total })

        // One corrupt file among a hundred changed ones fails the sync by name, whichever loop
        // fetched it; the generation in force stays, and the rest were verified and kept (G3).
        let next = files.merging(Self.files(100, version: 2)) { _, changed in changed }
        _ = f.origin.publish(next)
        f.origin.clearFaults()
        f.origin.inject(.corrupt, on: "f/50.bin")
        let error = expectError(.integrity) { _ = try f.sync() }
        #expect(error?.code == .integrity)
        #expect(error?.message.contains("f/50.bin") == true)
        #expect(GenerationStore(layout: f.settings.cache).current()?.number == 1)
        #expect(FileManager.default.contents(atPath: try f.resolve("f/1.bin", offline: true).path).map(Array.init) == files["f/1.bin"])
        f.origin.clearFaults()
        f.origin.resetRequests()
        _ = try f.sync()
        #expect(f.fileRequests == ["f/50.bin"])
    }

    /// Every loop takes part, and the progress covers all of them to the last file.
    @Test func aLargeDownloadIsSharedByItsLoops() async throws {
        let origin = try await TestOrigin()
        Cleanups.add { await origin.shutdown() }
        let dir = NSTemporaryDirectory() + "cenarius-loops-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files: [FileDownload] = []
        for i in 0..<200 {
            let body = Array(String(repeating: "file \(i) ", count: i).utf8)
            origin.put("f/\(i).txt", body)
            files.append(FileDownload(url: "\(origin.url)/f/\(i).txt", destination: "\(dir)/f/\(i).txt",
                                      expected: ContentHash(hex: TestOrigin.md5(body))!, label: "f/\(i).txt"))
        }
        var options = TransferOptions()
        options.loops = 3
        options.connections = 6
        let downloader = try Downloader(options: options)
        let last = Mutex(TransferProgress())
        let results = downloader.download(files, progress: { progress in last.withLock { $0 = progress } })
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        #expect(downloader.lastLoopsUsed == 3)
        #expect(last.withLock { $0.filesDone == 200 && $0.bytes == results.reduce(0) { $0 + ((try? $1.get()) ?? 0) } })
    }

    /// A table that gives sizes has its largest files fetched first, so that the last transfers are
    /// small ones (FileQueue); a file of unknown size is not taken for a small one. Without sizes
    /// the files go in table order. One connection: the origin sees the order they are taken in.
    @Test func largerFilesAreFetchedFirstWhenTheTableGivesSizes() async throws {
        var f = try await Fixture.registered()
        f.settings.transfer.connections = 1
        let sizes = [("a.bin", 10), ("b.bin", 300_000), ("c.bin", 2_000), ("d.bin", 1_500_000), ("e.bin", 2_000), ("f.bin", 70_000)]
        let files = Dictionary(uniqueKeysWithValues: sizes.enumerated().map { ($1.0, [UInt8](repeating: UInt8($0), count: $1.1)) })
        // The table lists a file without a size as well.
        let unsized: [UInt8] = Array("no size given".utf8)
        f.origin.put("g.bin", unsized)
        _ = f.origin.publish(files, extraEntries: "{\"uri\": \"g.bin\", \"hash\": \"\(TestOrigin.md5(unsized))\"}", sizes: true)
        _ = try f.sync()
        // Equal sizes keep their table order (c before e).
        #expect(f.fileRequests == ["g.bin", "d.bin", "b.bin", "f.bin", "c.bin", "e.bin", "a.bin"])

        f.origin.resetRequests()
        _ = f.origin.publish(files.mapValues { $0 + [1] })
        _ = try f.sync()
        #expect(f.fileRequests == ["a.bin", "b.bin", "c.bin", "d.bin", "e.bin", "f.bin"])
    }

    @Test func loopsSplitTheConnectionLimitAndSmallDownloadsKeepOne() {
        #expect(Downloader.connectionShares(16, loops: 2) == [8, 8])
        #expect(Downloader.connectionShares(6, loops: 4) == [2, 2, 1, 1])
        var options = TransferOptions()
        #expect(Downloader.loopCount(files: 20, options: options) == 1)
        options.connections = 3
        #expect(Downloader.loopCount(files: 5000, options: options) == 1)
        options.loops = 4
        // Never more loops than connections or files.
        #expect(Downloader.loopCount(files: 5000, options: options) == 3)
        #expect(Downloader.loopCount(files: 2, options: options) == 2)
    }
}
