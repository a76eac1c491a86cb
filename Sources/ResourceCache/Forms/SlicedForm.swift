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
/// for it. The index's size (formSizes, patchSizes) chooses the forms and their connections; the
/// slices' length is what the HEAD requests that open those connections give (an index from
/// before the sizes names none); the bytes are checked where they always were, by decoding the
/// form against the signed table's hash.
final class SlicedForm: Sendable {
    /// A form is fetched this way when it is at least `minFormBytes` (the index's size: B11's owners
    /// of a single 589 kB form and of a 375 kB patch had them last, at 4.6 s and 1.5 s, one flow
    /// among a hundred), or, where the index gives no size, when its file is at least `minFileSize`;
    /// below, one request ends within a few round trips and the HEAD costs more than the slices save.
    static let minFormBytes: Int64 = 128 << 10
    static let minFileSize: Int64 = 1 << 20

    static func worthIt(form: Int64?, file: Int64?) -> Bool {
        if let form { return form >= minFormBytes }
        return (file ?? 0) >= minFileSize
    }
    /// Bytes per slice. Every owner fetches its share at once, and each flow on the uplink gets
    /// about an equal part of it: an owner whose share is a few large forms gets its part only when
    /// they come on as many flows as the others' small forms do. A form's slices had the pack's
    /// floor (none under 512 KiB), so B11's owner of a 420 kB and a 372 kB form (and a 240 kB one,
    /// under the old 256 KiB) fetched each as one flow among a hundred and had them last, at 5.0 s
    /// where the others' shares were in by 2.8–4.4 s (2026-11-28).
    static let sliceBytes: Int64 = 64 << 10
    /// Connections for its slices: one a slice where the index gives its size, else `maxConnections`.
    static func connections(form: Int64?) -> Int {
        guard let form else { return maxConnections }
        return Int(max(2, min(Int64(maxConnections), form / sliceBytes)))
    }
    static let maxConnections = 8
    /// The most forms of a round fetched this way, each on its own connections: its largest ones
    /// (B11: an owner whose share was two large forms had the second, one flow, 0.6 s after the first).
    static let perRound = 3

    private let done = DispatchGroup()
    private let outcome = Mutex<(decoded: Result<Int64, FormsAsTheyArrive.Failed>, wire: Int64)?>(nil)

    /// Starts fetching `job`'s form from `url`.
    init(_ job: FormsAsTheyArrive.Job, url: String, fetcher: FormFetcher, cancel: CancelToken?) {
        let (options, basePath, keep, growing) = (fetcher.options, fetcher.basePath, fetcher.keep, fetcher.growing)
        let policy = fetcher.policy.packs(options)
        let connections = Self.connections(form: fetcher.formBytes[job.product.hash])
        done.enter()
        DispatchQueue.global().async { [self] in
            defer { done.leave() }
            let download = SlicedDownload(options: options, warming: url, connections: connections, cancel: cancel)
            // A plain file (its exact bytes, checked against its hash) rather than a form to decode.
            let plain = job.source == .plain
            // No more than the file or a form of it can have: an origin's word is not trusted for a length.
            let most = plain ? job.product.size ?? job.limit : PeerFormAsk.bound(job.limit)
            guard let size = download.warmedLength(), size > 0, size <= most else {
                download.abandon()
                outcome.withLock { $0 = (.failure(.init(reason: "\(url): no length in the answers to HEAD, or more than \(most) bytes")), 0) }
                return
            }
            var sliced = SlicedDownload.Job(url: url, destination: job.form, size: size, expected: job.product.hash, label: job.product.label, policy: policy)
            sliced.writesThrough = true
            sliced.sliceBytes = Self.sliceBytes
            let file = download.start(sliced)
            // A plain file is announced by its hash, as FormRound.wantPlain announces one.
            if let name = plain ? job.product.hash.hex : PeerForms.name(Substring(job.path))?.name { growing?.grows(name, in: file) }
            let (failure, wire) = download.wait()
            let decoded = failure.map { .failure(.init(reason: $0.message)) } ?? (plain ? Self.check(job) : FormFetcher.decodeForm(job, basePath: basePath, keep: keep))
            if !plain { unlink(job.form) }
            outcome.withLock { $0 = (decoded, wire) }
        }
    }

    /// A plain file's bytes, at its destination, against the hash the signed table names: its size,
    /// or why not (the file removed).
    private static func check(_ job: FormsAsTheyArrive.Job) -> Result<Int64, FormsAsTheyArrive.Failed> {
        let expected = job.product.hash
        guard let (actual, size) = try? FileSystem.hashFile(job.form, algorithm: expected.algorithm), actual == expected else {
            unlink(job.form)
            return .failure(.init(reason: "\(job.product.label): the bytes do not match \(expected)"))
        }
        return .success(size)
    }

    /// Waits for the form: what it gave its file, and its bytes on the wire.
    func finish() -> (decoded: Result<Int64, FormsAsTheyArrive.Failed>, wire: Int64) {
        done.wait()
        return outcome.withLock { $0 } ?? (.failure(.init(reason: "sliced form not fetched")), 0)
    }
}
