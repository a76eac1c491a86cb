import RouteSync
import CCurl
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Verifies finished files off the download loops, so hashing uses another core instead of
/// stalling the network. A worker takes whatever has finished since its last round as one
/// batch, which is what lets BatchHasher hash eight or sixteen MD5s side by side. The loops of
/// one download share it (and its budget); each gets back the results of its own files.
///
/// A body the transfer held whole (see Transfer.wholeLimit and BodyBudget) arrives whole: the
/// worker writes the file and hashes the bytes it wrote, so the loop makes no file syscall for
/// it and nothing is read back. Other bodies were written by the loop and are hashed from the
/// page cache. A body still in the vector lanes when its round ends stays there, with its
/// memory, until a later round finishes it (BodyHasher); once the loops hurry, every round
/// finishes all.
final class HashCheck: Sendable {
    struct Done: Sendable {
        var id: Int
        var actual: ContentHash?
        var size: Int64
        /// The file could not be written (only for bodies handed over whole).
        var error: CenariusError?
    }

    struct Pending: Sendable {
        /// The loop that submitted it, and its number there.
        var loop: Int
        var id: Int
        var path: String
        var algorithm: ContentHash.Algorithm
        var body: BodyBuffer?
        /// Budget held by `body`, given back once it is written and hashed.
        var reserved: Int
        /// Writing `body` to its file failed.
        var error: CenariusError?
    }

    /// Files per round: enough to keep the lanes busy while results still reach the loops promptly.
    static let batchLimit = 128
    /// A round starts once this many files wait (or the loops are hurrying). Small rounds keep
    /// results prompt and few bodies in memory; the lanes stay full regardless, because bodies
    /// still running when a round ends carry over into the next (BodyHasher). Before that, a
    /// round of 16 files kept the sixteen lanes about a third full and rounds of 64 were needed.
    static let batchMinimum = 16
    /// Whole bodies, held by transfers or waiting here. 4 MiB keeps B1's peak RSS under F's
    /// 40 MiB (38–39 MiB; 46–52 MiB with 12) and its time where it was (0.46–0.58 s with 4,
    /// 0.47–0.66 s with 12, curl 0.57–0.64 s, three rounds side by side): past the budget the
    /// loop writes bodies itself, which costs little next to the transfers.
    static let bodyBudget = 4 << 20
    let budget = BodyBudget(limit: HashCheck.bodyBudget)

    /// A second worker starts only when a full batch waits while the first is busy: at the end
    /// of a download the backlog then takes both cores instead of one.
    static let maxWorkers = 2

    private let state: Mutex<State>
    private let workers = DispatchGroup()
    /// Their buffers and lanes are kept from one round to the next; each worker uses the one it was given.
    private let slots = (0..<HashCheck.maxWorkers).map { _ in Slot() }

    private final class Slot: Sendable {
        let hashers = Mutex(Hashers())
        /// A serial queue of its own gets a thread of its own. On the global queue, whose threads
        /// are as many as the cores, a download loop blocked in poll (loop 0 runs on one when the
        /// command is async) left room for one worker only, and the second waited for the first.
        let queue = DispatchQueue(label: "cenariusd.hash-check")
    }

    private struct Hashers: ~Copyable {
        let files = BatchHasher()
        /// A quarter of the budget each: what the lanes hold cannot starve the transfers of it.
        let bodies = BodyHasher<Pending>(holdLimit: HashCheck.bodyBudget / 4)
    }

    /// Wakes a loop's multi handle when one of its results is ready (curl_multi_wakeup is thread-safe).
    private let wake: @Sendable (_ loop: Int) -> Void

    init(loops: Int = 1, wake: @escaping @Sendable (_ loop: Int) -> Void) {
        state = Mutex(State(loops: loops))
        self.wake = wake
    }

    func submit(loop: Int, id: Int, path: String, algorithm: ContentHash.Algorithm, body: (bytes: BodyBuffer, reserved: Int)? = nil) {
        let start = state.withLock { state in
            state.submit(Pending(loop: loop, id: id, path: path, algorithm: algorithm, body: body?.bytes, reserved: body?.reserved ?? 0))
        }
        startWorkers(start)
    }

    private func startWorkers(_ hashers: [Int]) {
        for hasher in hashers {
            slots[hasher].queue.async(group: workers) { [self] in work(hasher) }
        }
    }

    private func work(_ hasher: Int) {
        var round = state.withLock { $0.nextRound(for: hasher) }
        while let (batch, finish) = round.batch {
            var files: [Pending] = []
            var failed: [Pending] = []
            var bodies: [(item: Pending, body: BodyBuffer, algorithm: ContentHash.Algorithm)] = []
            for var item in batch {
                guard let body = item.body else {
                    files.append(item)
                    continue
                }
                item.error = Self.write(body, to: item.path)
                item.body = nil
                if item.error == nil {
                    bodies.append((item, body, item.algorithm))
                } else {
                    failed.append(item)  // the file is not there to vouch for: no hash needed
                }
            }
            let (finished, holding) = slots[hasher].hashers.withLock { hashers in
                var finished: [(item: Pending, hash: ContentHash?, size: Int64)] = failed.map { ($0, nil, -1) }
                if let algorithm = files.first?.algorithm {
                    for (item, result) in zip(files, hashers.files.hash(files.map(\.path), algorithm: algorithm)) {
                        finished.append((item, result?.0, result?.1 ?? -1))
                    }
                }
                for (item, hash, size) in hashers.bodies.hash(bodies, finish: finish) { finished.append((item, hash, size)) }
                return (finished, hashers.bodies.holding)
            }
            budget.release(finished.reduce(0) { $0 + $1.item.reserved })
            // Woken under the lock, so that after `close` returns no check touches the loop.
            round = state.withLock { state in
                let results = finished.map { (item: $0.item, done: Done(id: $0.item.id, actual: $0.hash, size: $0.size, error: $0.item.error)) }
                for loop in state.finish(results, by: hasher, holding: holding) { wake(loop) }
                return state.nextRound(for: hasher)
            }
        }
        startWorkers(round.others)
    }

    private static func write(_ body: BodyBuffer, to path: String) -> CenariusError? {
        let fd = FileSystem.createFile(path)
        guard fd >= 0 else { return FileSystem.failure("cannot create", path) }
        defer { Glibc.close(fd) }
        return FileSystem.writeAll(fd, body.bytes) ? nil : FileSystem.failure("cannot write", path)
    }

    /// A loop's results ready since its last call. `idle`: it has no transfer running, so its
    /// next result must wake it. `tail`: it has no transfer left to start.
    func collect(loop: Int, idle: Bool, tail: Bool) -> [Done] {
        let (done, start) = state.withLock { $0.collect(loop: loop, idle: idle, tail: tail) }
        startWorkers(start)
        return done
    }

    /// A loop has finished: the others' last files are not kept waiting for a fuller batch on its account.
    func leave(loop: Int) {
        let start = state.withLock { $0.leave(loop: loop) }
        startWorkers(start)
    }

    /// Every loop is done (their multi handles may go): checks not yet started are dropped, and this
    /// waits for the rounds in progress, so that no file is written after the download returns.
    func close() {
        state.withLock { $0.closed = true }
        workers.wait()
    }
}
