import Synchronization

/// The files of one `download` call, shared by the loops that fetch them. A loop takes the next
/// file whenever it has room for another transfer, so every loop stays busy to the end whatever
/// sizes it happens to draw.
final class FileQueue: Sendable {
    let files: [FileDownload]
    private let maxBytes: Int64
    private let next = Atomic(0)
    private let outcome: Mutex<Outcome>

    private struct Outcome {
        var results: [Result<Int64, CenariusError>]
        var filesDone = 0
        var bytesDone: Int64 = 0
        /// Per loop: bytes received so far by its running transfers, and how many files it finished.
        var running: [Int64]
        var finishedBy: [Int]
    }

    init(_ files: [FileDownload], maxBytes: Int64, loops: Int) {
        self.files = files
        self.maxBytes = maxBytes
        outcome = Mutex(Outcome(results: Array(repeating: .failure(.internal("not run")), count: files.count),
                                running: Array(repeating: 0, count: loops), finishedBy: Array(repeating: 0, count: loops)))
    }

    /// Every file has been taken by a loop (some may still be running).
    var isDrained: Bool { next.load(ordering: .relaxed) >= files.count }

    /// A transfer for the next file no loop has taken; nil once all are taken.
    func take() -> Transfer? {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        guard index < files.count else { return nil }
        let file = files[index]
        return Transfer(index: index, url: file.url, label: file.label,
                        sink: .file(path: file.destination, expected: file.expected), maxBytes: maxBytes)
    }

    /// A file's outcome, from the loop that ran it: its verified size, or why not.
    func finish(_ index: Int, by loop: Int, _ result: Result<Int64, CenariusError>) {
        outcome.withLock { outcome in
            outcome.results[index] = result
            outcome.filesDone += 1
            outcome.finishedBy[loop] += 1
            if case .success(let size) = result { outcome.bytesDone += size }
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

    /// One result per file, in order.
    var results: [Result<Int64, CenariusError>] { outcome.withLock { $0.results } }
}
