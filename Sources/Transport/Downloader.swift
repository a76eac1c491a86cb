package import RouteSync
import CCurl
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The multi handle as the hash checks see it: they only ever call curl_multi_wakeup, which
/// libcurl documents as safe from any thread.
struct MultiHandle: @unchecked Sendable {
    let value: UnsafeMutableRawPointer
}

/// A file to fetch into `destination`, to be verified against `expected` (G1).
package struct FileDownload: Sendable {
    package let url: String
    package let destination: String
    package let expected: ContentHash
    /// Names the file in messages (its uri).
    package let label: String
    /// The size the route table gives, if it does: larger files are fetched first.
    package let size: Int64?
    /// The same file on other mirrors, tried in order when `url` cannot give it (error, 404, bad hash).
    package var mirrors: [String] = []
    /// A retry policy of its own (a compressed form or patch gets one attempt: FormPolicy); nil: the downloader's.
    package var policy: RetryPolicy?
    /// False for a compressed form or patch (B8), whose bytes are not the file's: what is checked
    /// against the table's hash is what it decodes to (FormDecoding), not the download.
    package var checksHash = true
    /// One of the slices of a large object fetched by several `Range` requests at once
    /// (SlicedDownload): its bytes go to their place in `destination`, which they share.
    package var slice: Slice?
    /// Where `url` leads, when it is one of several sources of the same kind (a LAN peer): once a
    /// transfer from it fails (but for a 404), its files not yet started are failed at once rather
    /// than each waiting out the same stall, and once it says "later" (a 503 or 429 with
    /// `Retry-After`) they are failed with that `retryAfter` (docs/peers.md).
    package var source: String?
    /// Written to `destination` as it arrives, for a reader that serves it on while it grows (a
    /// device's LAN peers take a form it is still fetching from the origin: docs/peers.md); told
    /// when it ends, and failed when the body breaks off or starts again.
    package var growing: GrowingFile?

    package struct Slice: Sendable {
        package var index: Int
        package var start: Int64
        /// Where the slice ends (exclusive); nil: the object's end.
        package var end: Int64?
        /// The shared file, which readers follow as its prefix grows.
        package var file: GrowingFile
        /// Each chunk written as it arrives, not buffered (a form LAN peers take as it grows).
        package var writesThrough = false
    }

    package init(url: String, destination: String, expected: ContentHash, label: String, size: Int64? = nil, mirrors: [String] = []) {
        self.mirrors = mirrors
        self.url = url
        self.destination = destination
        self.expected = expected
        self.label = label
        self.size = size
    }
}

/// A fetched small document (a route table, a signature).
package enum Document: Sendable {
    case notModified
    case content([UInt8], Validators)
}

package struct TransferProgress: Sendable {
    package var filesDone = 0
    package var filesTotal = 0
    package var bytes: Int64 = 0

    package init(filesDone: Int = 0, filesTotal: Int = 0, bytes: Int64 = 0) {
        self.filesDone = filesDone
        self.filesTotal = filesTotal
        self.bytes = bytes
    }
}

/// Downloads over libcurl multi handles: bounded, reused connections, HTTP/2 multiplexing
/// when offered, retries with backoff. Calls block the calling thread; use one instance from
/// one thread at a time (the daemon gives each sync its own thread). A large download runs
/// several loops, each a thread with its own multi handle and share of the connections.
package final class Downloader {
    let options: TransferOptions
    let policy: RetryPolicy
    private let documentPolicy: RetryPolicy
    /// Holds the current run to `maxRate`.
    var gate: RateGate?
    private let multi: UnsafeMutableRawPointer
    var idleHandles: [UnsafeMutableRawPointer] = []
    var random = SystemRandomNumberGenerator()
    /// Large objects this sync fetches beside its other requests (Downloader+Prefetch), by URL,
    /// and connections opened for the next one.
    var prefetched: [String: (download: SlicedDownload, file: GrowingFile)] = [:]
    var warmed: SlicedDownload?

    package init(options: TransferOptions = TransferOptions()) throws(CenariusError) {
        guard ccurl_load() != 0 else { throw .internal(String(cString: ccurl_load_error())) }
        self.options = options
        policy = RetryPolicy(options)
        var documents = RetryPolicy(options)
        documents.attempts = options.documentAttempts ?? options.attempts
        documentPolicy = documents
        guard let multi = ccurl_multi_init() else { throw .internal("curl_multi_init failed") }
        self.multi = multi
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, min(options.connections, options.hostConnections ?? options.connections))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, options.connections)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, options.connections)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, ccurl_pipe_multiplex())
    }

    /// To call before the process exits: waits for a libcurl load started at launch, whose
    /// dependencies' exit handlers must not run beside their own initialisation (ccurl_settle).
    package static func settleBeforeExit() {
        ccurl_settle()
    }

    deinit {
        abandonPrefetches()
        for handle in idleHandles { ccurl_easy_cleanup(handle) }
        ccurl_multi_cleanup(multi)
    }

    /// How a document is asked for beyond its URL and its validators.
    package struct DocumentOptions: Sendable {
        /// Request headers of the caller's own (a poll's report header).
        package var headers: [String]
        /// Whether the origin may send it compressed (Accept-Encoding); a store object's exact
        /// bytes (a compressed form, a patch) are asked as they are.
        package var encoded: Bool

        package init(headers: [String] = [], encoded: Bool = true) {
            self.headers = headers
            self.encoded = encoded
        }

        /// A store object's exact bytes.
        package static let identity = DocumentOptions(encoded: false)
    }

    /// Fetches a small document, conditionally when `validators` are given.
    package func fetchDocument(_ url: String, validators: Validators?, maxBytes: Int64 = Int64(RouteTable.maxBytes),
                               options document: DocumentOptions = DocumentOptions(), cancel: CancelToken? = nil) throws(CenariusError) -> Document {
        let transfer = Transfer(index: 0, url: url, label: url, sink: .memory(validators: validators), maxBytes: maxBytes)
        transfer.extraHeaders = document.headers
        transfer.acceptsEncoding = document.encoded
        transfer.policy = documentPolicy
        var document: Document = .notModified
        var failure: CenariusError?
        // A daemon's polls go through the multi handle it keeps, whose connection cache outlives
        // this sync; other documents (a trial's health URL) do not take it from them.
        let own = MultiHandle(value: multi)
        let polled = Remote.authority(of: url).map { options.headerHosts.contains($0) } ?? false
        let kept = polled ? options.sessions?.connections : nil
        let run = { (lease: inout KeptConnections.Lease?) in
            let multi = lease?.multi ?? own
            transfer.keepConnection = lease?.keep ?? true
            let checks = HashCheck { _ in _ = ccurl_multi_wakeup(multi.value) }
            defer { checks.close() }
            let lane = Loop.Lane(multi: multi, index: 0, checks: checks, connections: self.options.connections, cancel: cancel)
            Loop(self, feed: Loop.Feed(initial: [transfer]), lane: lane, listener: Loop.Listener { transfer, outcome in
                switch outcome {
                case .failure(let error): failure = error
                case .success:
                    self.lastDocument = PolledResponse(url: url, headers: transfer.headers, at: FileSystem.now())
                    document = transfer.status == 304
                        ? .notModified
                        : .content(transfer.body, Validators(etag: transfer.headers.etag, lastModified: transfer.headers.lastModified))
                }
            }).run()
            lease?.socket = transfer.socket
        }
        if let kept {
            kept.borrow(run)
        } else {
            var none: KeptConnections.Lease?
            run(&none)
        }
        if let failure { throw failure }
        return document
    }

    /// Opens `connections` connections to `url`'s origin at once, by HEAD requests of it, and
    /// keeps them for the transfers that follow on this downloader (SlicedDownload). Failures are
    /// of no account: the transfers open what they lack.
    /// Returns the object's length, as the first HEAD answer gives it (nil: none answered 200).
    func warm(_ url: String, connections: Int, cancel: CancelToken?) -> Int64? {
        let transfers = (0..<connections).map { i in
            // No limit: a HEAD answer announces the length of a body it does not send.
            let transfer = Transfer(index: i, url: url, label: url, sink: .memory(validators: nil), maxBytes: .max)
            transfer.headOnly = true
            transfer.acceptsEncoding = false
            transfer.policy = RetryPolicy(attempts: 1, base: 0, cap: 0, maxRetryAfter: 0)
            return transfer
        }
        let own = MultiHandle(value: multi)
        let checks = HashCheck { _ in _ = ccurl_multi_wakeup(own.value) }
        defer { checks.close() }
        let lane = Loop.Lane(multi: own, index: 0, checks: checks, connections: options.connections, cancel: cancel)
        var length: Int64?
        Loop(self, feed: Loop.Feed(initial: transfers), lane: lane, listener: Loop.Listener { transfer, outcome in
            if case .success = outcome, transfer.status == 200, length == nil { length = transfer.headers.contentLength }
        }).run()
        return length
    }

    /// Downloads and verifies files. One result per input, in order: the verified size, or why not.
    /// `finished` hears each file's result as soon as it has one, on the thread of the loop that
    /// ran it: a caller that decodes what arrived (a peer's form) need not wait for the last file.
    package func download(_ files: [FileDownload], cancel: CancelToken? = nil, progress: ((TransferProgress) -> Void)? = nil,
                          finished: FileQueue.Finished? = nil) -> [Result<Int64, CenariusError>] {
        // This downloader is the first loop, on the calling thread; the others are new downloaders
        // on threads of their own (fewer if one cannot be had: the connections are shared by those there are).
        let helpers = (1..<Self.loopCount(files: files.count, options: options)).compactMap { _ in try? Downloader(options: options) }
        let loops = [self] + helpers
        let shares = Self.connectionShares(options.connections, loops: loops.count)
        let gate = options.maxRate > 0 ? RateGate(bytesPerSecond: options.maxRate) : nil
        for (loop, share) in zip(loops, shares) {
            loop.limitConnections(to: share)
            loop.gate = gate
        }
        defer {
            limitConnections(to: options.connections)
            self.gate = nil
        }
        let queue = FileQueue(files, maxBytes: options.maxFileSize, loops: loops.count, finished: finished)
        let multis = loops.map { MultiHandle(value: $0.multi) }
        let checks = HashCheck(loops: loops.count) { loop in _ = ccurl_multi_wakeup(multis[loop].value) }
        let running = DispatchGroup()
        for (offset, helper) in helpers.enumerated() {
            let handoff = LoopHandoff(downloader: helper)
            DispatchQueue(label: "cenariusd.download-loop").async(group: running) {
                let downloader = handoff.downloader
                let lane = Loop.Lane(multi: MultiHandle(value: downloader.multi), index: offset + 1, checks: checks, connections: shares[offset + 1], cancel: cancel)
                downloader.runLoop(lane, of: queue, report: nil)
            }
        }
        let report = progress.map { progress in { progress(queue.progress) } }
        runLoop(Loop.Lane(multi: multis[0], index: 0, checks: checks, connections: shares[0], cancel: cancel), of: queue, report: report)
        // The other loops may still have a large file or two to go: the progress goes on.
        while running.wait(timeout: .now() + 0.1) == .timedOut { report?() }
        checks.close()
        lastLoopsUsed = queue.loopsUsed
        lastBytesOnWire = queue.wire
        report?()
        return queue.results
    }

    /// What the origin answered to the last document fetched (its status and cache headers).
    package private(set) var lastDocument: PolledResponse?

    /// Body bytes the last `download` received, of failed and retried attempts too: what a
    /// sync reports as fetched (bytes held are what the files add up to).
    package private(set) var lastBytesOnWire: Int64 = 0

    /// How many loops the last `download` kept busy (tests check that a large download is shared).
    private(set) var lastLoopsUsed = 0

    /// Loops for a download of `files` files: one per core up to `maxLoops`, each with at least
    /// four connections and 64 files. One loop does all of libcurl's work and every recv and
    /// request on one core, and that core, not the network or the hashing, limits a large
    /// download; the daemon's usual few changed files stay on one thread.
    static func loopCount(files: Int, options: TransferOptions) -> Int {
        if let loops = options.loops { return max(1, min(loops, options.connections, files)) }
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return max(1, min(maxLoops, cores, options.connections / 4, files / 64))
    }

    static let maxLoops = 4

    /// `connections` split as evenly as can be over `loops` (the total stays the limit the user set).
    static func connectionShares(_ connections: Int, loops: Int) -> [Int] {
        (0..<loops).map { connections / loops + ($0 < connections % loops ? 1 : 0) }
    }

    private func limitConnections(to count: Int) {
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, min(count, options.hostConnections ?? count))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, count)
    }

    /// One loop of a download: takes files from the queue until there are none left. Every 0.1 s it
    /// tells the queue how far its running transfers are, then calls `report` (the first loop's).
    private func runLoop(_ lane: Loop.Lane, of queue: FileQueue, report: (() -> Void)?) {
        let loop = lane.index
        let feed = Loop.Feed(more: queue.take, drained: { queue.isDrained })
        let listener = Loop.Listener(progress: { running in
            queue.running(running, in: loop)
            report?()
        }, finished: { transfer, outcome in
            queue.finish(transfer.index, by: loop, outcome.map { transfer.received }, wire: transfer.wire)
        })
        Loop(self, feed: feed, lane: lane, listener: listener).run()
        queue.running(0, in: loop)
        lane.checks.leave(loop: loop)
    }

    /// Seconds before a file whose growing body broke off (ResponseHeaders.growing) is asked again.
    package static let growingRetry = 0.25

    /// nil: success. Otherwise what went wrong, for the retry policy.
    func classify(_ transfer: Transfer, _ code: CURLcode) -> AttemptFailure? {
        if let failure = transfer.failure {
            return .permanent(failure)
        }
        if code != CURLE_OK {
            // libcurl's own detail names the address it tried (the proxy's, when one is set)
            // and what it got; its one-line summary of the code is the fallback.
            let detail = transfer.lastErrorDetail
            let reason = detail.isEmpty ? String(cString: ccurl_easy_strerror(code)) : detail
            let message = transfer.label == transfer.url ? "\(transfer.label): \(reason)" : "\(transfer.label): \(reason) (\(transfer.url))"
            rememberResumePoint(transfer)
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR,
                 CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM,
                 CURLE_SSL_CONNECT_ERROR:
                // Some of a successful answer's body arrived: this file broke, not the way to the origin.
                let cut = transfer.isSuccessStatus && transfer.received > 0
                if transfer.fromPeer, transfer.isSuccessStatus, transfer.headers.growing {
                    // The peer's own download of it broke off or paused: "not yet", not a fault.
                    return .permanent(CenariusError(.remote, message + "; the peer was still fetching it", retryAfter: Self.growingRetry, cause: .cutShort))
                }
                return .transient(CenariusError(.remote, message, cause: cut ? .cutShort : code == CURLE_COULDNT_CONNECT ? .refused : nil))
            case CURLE_FILE_COULDNT_READ_FILE:
                return .permanent(CenariusError(.remote, "\(transfer.label): cannot read \(transfer.url)", cause: .missingFile))
            default:
                return .permanent(.remote(message))
            }
        }
        if transfer.status == 304, case .memory(let validators) = transfer.sink, validators != nil {
            return nil
        }
        guard transfer.isSuccessStatus else {
            if let tls = TLSFailure.describeHTTP(transfer, options: options) { return .permanent(tls) }
            let message = "\(transfer.label): HTTP \(transfer.status) from \(transfer.url)"
            switch transfer.status {
            case 429, 503: return .throttled(message, retryAfter: transfer.headers.retryAfter)
            case 408, 500, 502, 504: return .transient(CenariusError(.remote, message, cause: .httpStatus(transfer.status)))
            default: return .permanent(CenariusError(.remote, message, cause: .httpStatus(transfer.status)))
            }
        }
        return nil
    }

    /// After the body is complete: the file's hash against the table's. nil: verified.
    func mismatch(_ transfer: Transfer, _ done: HashCheck.Done) -> AttemptFailure? {
        guard case .file(let path, let expected) = transfer.sink else { return nil }
        if let error = done.error { return .permanent(error) }
        guard transfer.checksHash else { return nil }
        guard let actual = done.actual else { return .permanent(FileSystem.failure("cannot read back", path)) }
        guard actual != expected else { return nil }
        transfer.resumeValidator = nil
        transfer.discardPartial()
        return .transient(.integrity("\(transfer.label): hash mismatch, expected \(expected) but got \(actual) (\(transfer.received) bytes from \(transfer.url))"))
    }

    /// A body cut short may be resumed if the server named a validator that If-Range can use.
    private func rememberResumePoint(_ transfer: Transfer) {
        // A 206 answers a Range already (nginx sends no Accept-Ranges with it).
        guard case .file = transfer.sink, transfer.received > 0, transfer.headers.acceptRanges || transfer.status == 206 else {
            transfer.resumeValidator = nil
            return
        }
        if let etag = transfer.headers.etag, !etag.hasPrefix("W/") {
            transfer.resumeValidator = etag
        } else {
            transfer.resumeValidator = transfer.headers.lastModified
        }
    }

    /// Gives a helper downloader to the thread that runs its loop; nothing else touches it until
    /// that loop has finished and `download` has waited for it.
    private struct LoopHandoff: @unchecked Sendable {
        let downloader: Downloader
    }
}
