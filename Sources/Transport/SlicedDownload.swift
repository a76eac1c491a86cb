import Dispatch
package import RouteSync
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A large immutable object (a pack, B8 v2) fetched as several `Range` requests at once, each on a
/// connection of its own, on a thread of its own, into one file that readers follow as its whole
/// prefix grows (GrowingFile). On a slow link one fresh TCP connection spends its first round trips
/// in slow start, well below the link's rate; sixteen together fill it about three round trips
/// sooner (docs/release-bytes.md has the measurements).
///
/// Two steps, so that the connections can be opened before the object is known: `init` starts the
/// thread, which opens them when `warming` names a URL (HEAD requests, beside the request for the
/// head that will name the object), and `start` gives it the object.
package final class SlicedDownload: Sendable {
    package struct Job: Sendable {
        package var url: String
        package var destination: String
        package var size: Int64
        /// The object's own hash (what names it); each slice's bytes are checked where they are decoded.
        package var expected: ContentHash
        package var label: String
        package var policy: RetryPolicy?
        /// Its bytes written as they arrive (Slice.writesThrough): peers follow the file's prefix.
        package var writesThrough = false
        /// Bytes per slice, and no `minSliced` floor (nil: the defaults, made for packs). An owner's
        /// form shares the uplink with every other owner's transfers, each flow about an equal part:
        /// its slices give it its share (SlicedForm).
        package var sliceBytes: Int64?

        package init(url: String, destination: String, size: Int64, expected: ContentHash, label: String, policy: RetryPolicy? = nil) {
            self.url = url
            self.destination = destination
            self.size = size
            self.expected = expected
            self.label = label
            self.policy = policy
        }
    }

    private struct State: Sendable {
        var job: Job?
        var file: GrowingFile?
        var failure: CenariusError?
        var wire: Int64 = 0
        /// The object's length as the warming HEAD requests gave it.
        var length: Int64?
    }

    /// The most slices, the smallest object that is sliced at all, and the bytes per slice below
    /// which there are fewer (a 1.6 MB pack or more: 16 slices; 1 MB: 10; 512 KiB: 5). Sixteen
    /// connections carry 16 × 10 segments in their first round trip, near the bench link's 250 KB:
    /// streamlit's 1.83 MB delta pack in 16 slices instead of 13 (one per 128 KiB) took a release
    /// 1.258 → 1.224 s (medians of four).
    package static let maxSlices = 16
    package static let minSliced: Int64 = 512 << 10
    static let bytesPerSlice: Int64 = 96 << 10
    /// Each slice this much larger than the one before: the first ones end soon, so that the whole
    /// prefix grows while the bytes arrive and the pack is decoded as it comes rather than after
    /// the last byte; the last ones run on connections whose windows have grown by then. Measured
    /// on the bench's link, a first install of a 4.3 MB pack: 8 equal slices 2.20 s, 8 growing by
    /// half 2.18 s, 12 by 1.3 2.15 s, 16 by 1.2 2.13 s (docs/release-bytes.md).
    static let growth = 1.2

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)
    private let warmed = DispatchGroup()
    private let done = DispatchGroup()
    private let stop: CancelToken
    /// The most slices this download makes: one per connection it may open.
    private let slices: Int

    /// Starts the thread; with `warming`, it opens `connections` connections to that URL's origin
    /// at once, by HEAD requests of it. The object is cut into at most that many slices, and never
    /// more than `--connections`.
    package init(options: TransferOptions, warming: String? = nil, connections: Int = maxSlices, cancel: CancelToken?) {
        stop = CancelToken(following: cancel)
        slices = max(1, min(connections, options.connections))
        let downloader = Box(try? Downloader(options: options))
        done.enter()
        warmed.enter()
        DispatchQueue(label: "cenariusd.sliced-download").async { [self] in
            defer {
                // However the thread ends, readers of the file stop at its end; a peer served its
                // growing prefix sees a break, not an end, when the object fell short.
                let (file, size) = state.withLock { ($0.file, $0.job?.size) }
                if let file, let size, file.wholePrefix < size { file.fail() } else { file?.finish() }
                done.leave()
            }
            guard let downloader = downloader.value else {
                state.withLock { $0.failure = .internal("no downloader for a sliced download") }
                warmed.leave()
                return
            }
            // A file:// remote (a bundle) has no connection to open: warming it only opens the file
            // sixteen times over (a first install from a stick).
            if let warming, !warming.hasPrefix("file:") {
                let length = downloader.warm(warming, connections: slices, cancel: stop)
                state.withLock { $0.length = length }
            }
            warmed.leave()
            ready.wait()
            guard let job = state.withLock({ $0.job }), let file = state.withLock({ $0.file }), !stop.isCancelled else { return }
            run(job, file: file, on: downloader)
        }
    }

    /// The length of the object named by `warming`, once its HEAD requests are answered: for an
    /// object whose size nothing signed gives (an owner's largest form, SlicedForm); nil when no
    /// answer gave one.
    package func warmedLength() -> Int64? {
        warmed.wait()
        return state.withLock { $0.length }
    }

    /// Fetches `job` (once); the file readers follow.
    package func start(_ job: Job) -> GrowingFile {
        let cuts = job.url.hasPrefix("file:") ? [0] : Self.cuts(size: job.size, slices: slices, sliceBytes: job.sliceBytes)
        let file = GrowingFile(path: job.destination, cuts: cuts, cancel: stop)
        let first = state.withLock { state -> Bool in
            guard state.job == nil else { return false }
            state.job = job
            state.file = file
            return true
        }
        precondition(first, "a sliced download is started once")
        ready.signal()
        return file
    }

    /// Waits for the download to end: nil when every byte of the object is in the file, else why
    /// not; and the body bytes it received.
    package func wait() -> (failure: CenariusError?, wire: Int64) {
        done.wait()
        return state.withLock { state in
            guard let file = state.file, let job = state.job else { return (state.failure ?? .internal("sliced download not started"), state.wire) }
            if file.wholePrefix >= job.size { return (nil, state.wire) }
            return (state.failure ?? .remote("\(job.label): \(job.url) ended after \(file.wholePrefix) of \(job.size) bytes"), state.wire)
        }
    }

    /// Not needed after all: stops the download, waits for its thread, removes its file.
    package func abandon() {
        stop.cancel()
        ready.signal()
        done.wait()
        if let path = state.withLock({ $0.job?.destination }) { unlink(path) }
    }

    /// Where each of `slices` slices of `size` bytes starts: each `growth` times the one before; with
    /// `sliceBytes`, about that many bytes a slice whatever the size (Job.sliceBytes).
    static func cuts(size: Int64, slices wanted: Int, sliceBytes: Int64? = nil) -> [Int64] {
        let floor = sliceBytes == nil ? minSliced : 0
        let count = size < floor ? 1 : Int(max(1, min(Int64(min(wanted, maxSlices)), size / (sliceBytes ?? bytesPerSlice))))
        let weights = (0..<count).map { pow(growth, Double($0)) }
        let total = weights.reduce(0, +)
        var cuts: [Int64] = [0]
        var sum = 0.0
        for weight in weights.dropLast() {
            sum += weight
            cuts.append(Int64(Double(size) * sum / total))
        }
        return cuts
    }

    /// The slices of `job`; the thread that calls it finishes `file` afterwards.
    private func run(_ job: Job, file: GrowingFile, on downloader: Downloader) {
        let fd = FileSystem.createFile(job.destination)
        guard fd >= 0 else {
            let failure = FileSystem.failure("cannot create", job.destination)
            state.withLock { $0.failure = failure }
            return
        }
        close(fd)
        let cuts = file.cuts
        let slices = cuts.indices.map { i in
            let end = i + 1 < cuts.count ? cuts[i + 1] : job.size
            var slice = FileDownload(url: job.url, destination: job.destination, expected: job.expected, label: job.label,
                                     size: end - cuts[i])
            slice.policy = job.policy
            slice.checksHash = false
            slice.slice = .init(index: i, start: cuts[i], end: i + 1 < cuts.count ? end : nil, file: file, writesThrough: job.writesThrough)
            return slice
        }
        let results = downloader.download(slices, cancel: stop)
        let wire = downloader.lastBytesOnWire
        // A slice that failed may be covered all the same (the first one took the whole object).
        let failure = results.compactMap { result -> CenariusError? in if case .failure(let error) = result { error } else { nil } }.first
        state.withLock {
            $0.wire = wire
            $0.failure = failure
        }
    }

    /// Hands the downloader made on the caller's thread to the download's own thread, which alone uses it.
    private struct Box: @unchecked Sendable {
        let value: Downloader?
        init(_ value: Downloader?) { self.value = value }
    }
}
