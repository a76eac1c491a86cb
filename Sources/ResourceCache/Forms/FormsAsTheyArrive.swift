import Dispatch
import RouteSync
import Synchronization
import Transport

/// A round's forms decoded as each download ends, on a thread of their own, rather than once the
/// round's last download is in. An owner keeps each form for its LAN peers (PeerForms) the moment
/// it gave its file, so a peer asking for it waits for that form, not for the owner's slowest one
/// (B11: an owner's forms used to appear all at once, and every asker waited for the last owner).
final class FormsAsTheyArrive: Sendable {
    /// What decoding one form takes; all of it known before the downloads start.
    struct Job: Sendable {
        /// The product's index in the fetch.
        let index: Int
        let product: FormFetcher.Product
        let limit: Int64
        let source: FormSource
        let form: String
        let path: String
    }

    /// Why a form did not give its file (for the fetch's fallbacks).
    struct Failed: Error {
        let reason: String
    }

    private let jobs: [Int: Job]
    private let decode: @Sendable (Job) -> Result<Int64, Failed>
    private let queue = DispatchQueue(label: "cenariusd.forms-as-they-arrive")
    private let running = DispatchGroup()
    private let decoded = Mutex<[Int: Result<Int64, Failed>]>([:])

    /// `jobs` by the index of their form among the round's downloads.
    init(jobs: [Int: Job], decode: @escaping @Sendable (Job) -> Result<Int64, Failed>) {
        self.jobs = jobs
        self.decode = decode
    }

    /// The downloader's word that download `index` ended: its form decoded now, when it arrived.
    func finished(_ index: Int, _ result: Result<Int64, CenariusError>) {
        guard case .success = result, let job = jobs[index] else { return }
        queue.async(group: running) {
            let outcome = self.decode(job)
            self.decoded.withLock { $0[job.index] = outcome }
        }
    }

    /// `finished`, as the downloader takes it.
    var listener: FileQueue.Finished {
        { index, result in self.finished(index, result) }
    }

    /// Once the downloads have ended: what each decoded form gave, by product.
    func results() -> [Int: Result<Int64, Failed>] {
        running.wait()
        return decoded.withLock { $0 }
    }
}
