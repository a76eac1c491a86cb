package import RouteSync
import Synchronization

/// The files of one `download` call, shared by the loops that fetch them. A loop takes the next
/// file whenever it has room for another transfer, so every loop stays busy to the end whatever
/// sizes it happens to draw.
///
/// When the route table gives sizes (`cenariusd routes` writes them), the largest files go
/// first: the last transfers are then small ones, so every connection runs to the end instead of
/// a few finishing large files alone, and no large body is left to be hashed after the network
/// is done. Files of unknown size are not assumed small: they go before the others.
///
/// A LAN peer's files go smallest first (ShareOrder, docs/peers.md).
///
/// Slices of one object (SlicedDownload) keep their order: the first is the smallest and its
/// request must leave first. A server answers the requests of one burst in turn, each answer's
/// first window taking its turn on the link, so the slices asked first start first and hold the
/// lead; largest first, the prefix readers wait for came last, and streamlit's 7.2 MB pack took
/// 3.76 s where in order it takes 3.37 s (docs/release-bytes.md).
package final class FileQueue: Sendable {
    /// Told each file's result (its index in the download) as soon as it is final.
    package typealias Finished = @Sendable (Int, Result<Int64, CenariusError>) -> Void
    let files: [FileDownload]
    private let finished: Finished?
    /// Indexes into `files`, in the order they are taken.
    private let order: [Int]
    private let maxBytes: Int64
    private let next = Atomic(0)
    private let outcome: Mutex<Outcome>
    /// Sources (FileDownload.source) that failed a transfer in this run, and those that said
    /// "later" (a 503 or 429 with `Retry-After`): the error their queued files get instead.
    private let failedSources = Mutex<[String: CenariusError]>([:])
    /// "Not yet" answers (a 503 with `Retry-After` of a second or less: the peer is still fetching
    /// that file, not busy) a source gave in this run: its other files are still asked, up to
    /// `notYetTolerance` such answers, since an owner's files become ready one by one and the one
    /// asked first (the largest) is seldom the first ready; past that the rest wait for the next run.
    private let notYet = Mutex<[String: Int]>([:])
    static let notYetTolerance = 4

    private struct Outcome {
        var results: [Result<Int64, CenariusError>]
        var filesDone = 0
        var bytesDone: Int64 = 0
        /// Body bytes every attempt of every finished file carried.
        var wire: Int64 = 0
        /// Per loop: bytes received so far by its running transfers, and how many files it finished.
        var running: [Int64]
        var finishedBy: [Int]
    }

    init(_ files: [FileDownload], maxBytes: Int64, loops: Int, finished: Finished? = nil) {
        self.files = files
        self.finished = finished
        self.maxBytes = maxBytes
        if files.contains(where: { $0.size != nil }), !files.contains(where: { $0.slice != nil }) {
            let sizes = files.map { $0.size ?? .max }
            // A LAN peer's files smallest first, as their owner fetches them after its largest (ShareOrder):
            // each is then whole there or arriving by the time it is asked for.
            let smallestFirst = files.allSatisfy { $0.source != nil }
            order = files.indices.sorted { sizes[$0] != sizes[$1] ? (sizes[$0] > sizes[$1]) != smallestFirst : $0 < $1 }
        } else {
            order = Array(files.indices)
        }
        outcome = Mutex(Outcome(results: Array(repeating: .failure(.internal("not run")), count: files.count),
                                running: Array(repeating: 0, count: loops), finishedBy: Array(repeating: 0, count: loops)))
    }

    /// Every file has been taken by a loop (some may still be running).
    var isDrained: Bool { next.load(ordering: .relaxed) >= files.count }

    /// A transfer for the next file no loop has taken; nil once all are taken.
    func take() -> Transfer? {
        var index: Int
        var file: FileDownload
        repeat {
            let taken = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard taken < order.count else { return nil }
            index = order[taken]
            file = files[index]
            guard let source = file.source, let error = failedSources.withLock({ $0[source] }) else { break }
            outcome.withLock { outcome in
                outcome.results[index] = .failure(error)
                outcome.filesDone += 1
            }
            finished?(index, .failure(error))
        } while true
        // A peer's body may be zstd that libcurl decodes: no more than the file's signed size is written.
        let limit = file.source != nil ? min(maxBytes, file.size ?? maxBytes) : maxBytes
        let transfer = Transfer(index: index, url: file.url, label: file.label,
                                sink: .file(path: file.destination, expected: file.expected), maxBytes: limit)
        transfer.mirrors = file.mirrors
        transfer.fromPeer = file.source != nil
        transfer.policy = file.policy
        transfer.checksHash = file.checksHash
        transfer.slice = file.slice
        transfer.growing = file.growing
        return transfer
    }

    /// A file's outcome, from the loop that ran it: its verified size, or why not.
    func finish(_ index: Int, by loop: Int, _ result: Result<Int64, CenariusError>, wire: Int64) {
        outcome.withLock { outcome in
            outcome.results[index] = result
            outcome.wire += wire
            outcome.filesDone += 1
            outcome.finishedBy[loop] += 1
            if case .success(let size) = result { outcome.bytesDone += size }
        }
        if let growing = files[index].growing {
            if case .success = result { growing.finish() } else { growing.fail() }
        }
        finished?(index, result)
        // A source that lacks the file (404) has not failed; one that says "later" is busy.
        if case .failure(let error) = result, !error.isMissingRemoteFile, let source = files[index].source {
            if let wait = error.retryAfter, wait <= 1, notYet.withLock({ counts in counts[source, default: 0] += 1; return counts[source]! < Self.notYetTolerance }) {
                return
            }
            let label = files[index].label
            let skipped = error.retryAfter.map { CenariusError(.remote, "\(label)'s source \(source) is busy", retryAfter: $0) }
                ?? CenariusError(.remote, "not asked of \(source), which failed another transfer (\(label))", cause: error.cause == .refused ? .refused : nil)
            failedSources.withLock { failed in if failed[source]?.retryAfter != nil || failed[source] == nil { failed[source] = skipped } }
        }
    }

    /// A loop's running transfers have received `bytes` so far.
    func running(_ bytes: Int64, in loop: Int) {
        outcome.withLock { $0.running[loop] = bytes }
    }

    /// Files finished so far, and the bytes of those and of the transfers still running.
    var progress: TransferProgress {
        outcome.withLock { TransferProgress(filesDone: $0.filesDone, filesTotal: files.count, bytes: $0.bytesDone + $0.running.reduce(0, +)) }
    }

    /// How many loops finished at least one file.
    var loopsUsed: Int { outcome.withLock { $0.finishedBy.filter { $0 > 0 }.count } }

    /// Body bytes on the wire for the finished files, failed and retried attempts included.
    var wire: Int64 { outcome.withLock { $0.wire } }

    /// One result per file, in order.
    var results: [Result<Int64, CenariusError>] { outcome.withLock { $0.results } }
}
