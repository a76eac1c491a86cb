import Dispatch
import RouteSync
import Synchronization
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// An owner's large form of its share fetched as `Range` slices on connections of its own
/// (SlicedDownload), on a thread of its own beside the round's other downloads, announced to its
/// LAN peers as its whole prefix grows, then decoded and kept as the round's others are.
///
/// Why (B11, docs/peers.md): every owner fetches its share at once, a hundred flows on one uplink;
/// the largest form, one flow among them, reached its owner 0.6–1.9 s after the uplink had carried
/// every other byte, its window still small once the others were done, and every device waited
/// for it. Its size is in nothing signed (the index names forms, not their sizes), so the HEAD
/// requests that open the slices' connections give it; the bytes are checked where they always
/// were, by decoding the form against the signed table's hash.
final class SlicedForm: Sendable {
    /// A form is fetched this way when it is at least `minFormBytes` (the index's size: B11's owners
    /// of a single 589 kB form and of a 375 kB patch had them last, at 4.6 s and 1.5 s, one flow
    /// among a hundred), or, where the index gives no size, when its file is at least `minFileSize`;
    /// below, one request ends within a few round trips and the HEAD costs more than the slices save.
    static let minFormBytes: Int64 = 256 << 10
    static let minFileSize: Int64 = 1 << 20

    static func worthIt(form: Int64?, file: Int64?) -> Bool {
        if let form { return form >= minFormBytes }
        return (file ?? 0) >= minFileSize
    }
    /// Connections for its slices (the slices of 96 KiB or more each: SlicedDownload.cuts).
    static let connections = 8
    /// The most forms of a round fetched this way, each on its own connections: its largest ones
    /// (B11: an owner whose share was two large forms had the second, one flow, 0.6 s after the first).
    static let perRound = 3

    private let done = DispatchGroup()
    private let outcome = Mutex<(decoded: Result<Int64, FormsAsTheyArrive.Failed>, wire: Int64)?>(nil)

    /// Starts fetching `job`'s form from `url`.
    init(_ job: FormsAsTheyArrive.Job, url: String, fetcher: FormFetcher, cancel: CancelToken?) {
        let (options, basePath, keep, growing) = (fetcher.options, fetcher.basePath, fetcher.keep, fetcher.growing)
        let policy = fetcher.policy.packs(options)
        done.enter()
        DispatchQueue.global().async { [self] in
            defer { done.leave() }
            let download = SlicedDownload(options: options, warming: url, connections: Self.connections, cancel: cancel)
            guard let size = download.warmedLength(), size > 0 else {
                download.abandon()
                outcome.withLock { $0 = (.failure(.init(reason: "\(url): no length in the answers to HEAD")), 0) }
                return
            }
            var sliced = SlicedDownload.Job(url: url, destination: job.form, size: size, expected: job.product.hash, label: job.product.label, policy: policy)
            sliced.writesThrough = true
            let file = download.start(sliced)
            if let name = PeerForms.name(Substring(job.path))?.name { growing?.grows(name, in: file) }
            let (failure, wire) = download.wait()
            let decoded = failure.map { .failure(.init(reason: $0.message)) } ?? FormFetcher.decodeForm(job, basePath: basePath, keep: keep)
            unlink(job.form)
            outcome.withLock { $0 = (decoded, wire) }
        }
    }

    /// Waits for the form: what it gave its file, and its bytes on the wire.
    func finish() -> (decoded: Result<Int64, FormsAsTheyArrive.Failed>, wire: Int64) {
        done.wait()
        return outcome.withLock { $0 } ?? (.failure(.init(reason: "sliced form not fetched")), 0)
    }
}
