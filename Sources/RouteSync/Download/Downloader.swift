import CCurl
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Cancels a running download from another thread (graceful shutdown, SIGTERM).
package final class CancelToken: Sendable {
    private let flag = Mutex(false)
    package init() {}
    package func cancel() { flag.withLock { $0 = true } }
    package var isCancelled: Bool { flag.withLock { $0 } }
}

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
}

/// Downloads over libcurl multi handles: bounded, reused connections, HTTP/2 multiplexing
/// when offered, retries with backoff. Calls block the calling thread; use one instance from
/// one thread at a time (the daemon gives each sync its own thread). A large download runs
/// several loops, each a thread with its own multi handle and share of the connections.
package final class Downloader {
    private let options: TransferOptions
    private let policy: RetryPolicy
    private let documentPolicy: RetryPolicy
    /// Holds the current run to `maxRate`.
    private var gate: RateGate?
    private let multi: UnsafeMutableRawPointer
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var random = SystemRandomNumberGenerator()

    package init(options: TransferOptions = TransferOptions()) throws(CenariusError) {
        guard ccurl_load() != 0 else { throw .internal(String(cString: ccurl_load_error())) }
        self.options = options
        policy = RetryPolicy(options)
        var documents = RetryPolicy(options)
        documents.attempts = options.documentAttempts ?? options.attempts
        documentPolicy = documents
        guard let multi = ccurl_multi_init() else { throw .internal("curl_multi_init failed") }
        self.multi = multi
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.connections)
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
        for handle in idleHandles { ccurl_easy_cleanup(handle) }
        ccurl_multi_cleanup(multi)
    }

    /// Fetches a small document, conditionally when `validators` are given.
    package func fetchDocument(_ url: String, validators: Validators?, maxBytes: Int64 = 64 << 20, cancel: CancelToken? = nil) throws(CenariusError) -> Document {
        let transfer = Transfer(index: 0, url: url, label: url, sink: .memory(validators: validators), maxBytes: maxBytes)
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
            self.run([transfer], on: multi, more: { nil }, loop: 0, checks: checks, connections: self.options.connections, cancel: cancel,
                     progress: nil) { transfer, outcome in
                switch outcome {
                case .failure(let error): failure = error
                case .success:
                    document = transfer.status == 304
                        ? .notModified
                        : .content(transfer.body, Validators(etag: transfer.headers.etag, lastModified: transfer.headers.lastModified))
                }
            }
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

    /// Downloads and verifies files. One result per input, in order: the verified size, or why not.
    package func download(_ files: [FileDownload], cancel: CancelToken? = nil, progress: ((TransferProgress) -> Void)? = nil) -> [Result<Int64, CenariusError>] {
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
        let queue = FileQueue(files, maxBytes: options.maxFileSize, loops: loops.count)
        let multis = loops.map { MultiHandle(value: $0.multi) }
        let checks = HashCheck(loops: loops.count) { loop in _ = ccurl_multi_wakeup(multis[loop].value) }
        let running = DispatchGroup()
        for (offset, helper) in helpers.enumerated() {
            let handoff = LoopHandoff(downloader: helper)
            DispatchQueue(label: "cenariusd.download-loop").async(group: running) {
                handoff.downloader.runLoop(offset + 1, of: queue, connections: shares[offset + 1], checks: checks, cancel: cancel, report: nil)
            }
        }
        let report = progress.map { progress in { progress(queue.progress) } }
        runLoop(0, of: queue, connections: shares[0], checks: checks, cancel: cancel, report: report)
        // The other loops may still have a large file or two to go: the progress goes on.
        while running.wait(timeout: .now() + 0.1) == .timedOut { report?() }
        checks.close()
        lastLoopsUsed = queue.loopsUsed
        report?()
        return queue.results
    }

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
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, count)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, count)
    }

    /// One loop of a download: takes files from the queue until there are none left. Every 0.1 s it
    /// tells the queue how far its running transfers are, then calls `report` (the first loop's).
    private func runLoop(_ loop: Int, of queue: FileQueue, connections: Int, checks: HashCheck, cancel: CancelToken?, report: (() -> Void)?) {
        run([], on: MultiHandle(value: multi), more: queue.take, drained: { queue.isDrained }, loop: loop, checks: checks, connections: connections, cancel: cancel,
            progress: { running in
                queue.running(running, in: loop)
                report?()
            }) { transfer, outcome in
            queue.finish(transfer.index, by: loop, outcome.map { transfer.received })
        }
        queue.running(0, in: loop)
        checks.leave(loop: loop)
    }

    // MARK: - The loop

    /// Runs `initial` and then whatever `more` gives until it gives nil, at most two transfers
    /// per connection at a time. `drained`: `more` has nothing left for anyone (other loops share
    /// it; true from the moment `more` first gives nil), so this loop's finished files need not wait
    /// for a fuller batch. `progress` hears, at
    /// most every 0.1 s, the bytes received so far by the transfers still running.
    private func run(_ initial: [Transfer], on multi: MultiHandle, more: () -> Transfer?, drained: () -> Bool = { true }, loop: Int, checks: HashCheck,
                     connections: Int, cancel: CancelToken?,
                     progress: ((Int64) -> Void)?, finished: (Transfer, Result<Void, CenariusError>) -> Void) {
        var waiting = initial.reversed() as [Transfer]
        var exhausted = false
        func fresh() -> Transfer? {
            guard !exhausted else { return nil }
            if let transfer = more() { return transfer }
            exhausted = true
            return nil
        }
        var active: [UnsafeMutableRawPointer: (Transfer, UnsafeMutablePointer<curl_slist>?)] = [:]
        let maxActive = max(1, connections * 2)
        var lastReport = 0.0
        // Files whose body is complete, being hashed on another thread.
        var verifying: [Int: Transfer] = [:]
        var nextCheck = 0

        func settle(_ transfer: Transfer, _ failure: AttemptFailure?) {
            guard let failure else { return complete(transfer, .success(())) }
            switch (transfer.policy ?? policy).decide(failure, attempt: transfer.attempt, random: Double.random(in: 0..<1, using: &random)) {
            case .giveUp(let error):
                // Another mirror may have it: every byte is verified, so mixing mirrors is safe.
                if error.code == .remote || error.code == .integrity, transfer.nextMirror() {
                    waiting.append(transfer)
                    return
                }
                complete(transfer, .failure(error))
            case .retry(let delay):
                transfer.notBefore = FileSystem.monotonic() + delay
                waiting.append(transfer)
            }
        }

        func complete(_ transfer: Transfer, _ outcome: Result<Void, CenariusError>) {
            transfer.closeFile()
            finished(transfer, outcome)
        }

        while !waiting.isEmpty || !active.isEmpty || !verifying.isEmpty || !exhausted {
            if cancel?.isCancelled == true {
                for (handle, (transfer, headers)) in active {
                    ccurl_multi_remove_handle(multi.value, handle)
                    recycle(handle, headers)
                    complete(transfer, .failure(.remote("\(transfer.label): cancelled")))
                }
                active.removeAll()
                for transfer in waiting { complete(transfer, .failure(.remote("\(transfer.label): cancelled"))) }
                waiting.removeAll()
                while let transfer = fresh() { complete(transfer, .failure(.remote("\(transfer.label): cancelled"))) }
                for transfer in verifying.values { complete(transfer, .failure(.remote("\(transfer.label): cancelled"))) }
                verifying.removeAll()
                break
            }
            let now = FileSystem.monotonic()
            // Start what may start: waiting is a stack, retried transfers are pushed on top with a notBefore.
            var deferred: [Transfer] = []
            while active.count < maxActive, let next = waiting.popLast() ?? fresh() {
                if next.notBefore > now {
                    deferred.append(next)
                    continue
                }
                next.budget = checks.budget
                let started = start(next, on: multi)
                switch started {
                case .success(let pair): active[pair.0] = (next, pair.1)
                case .failure(let error): complete(next, .failure(error))
                }
            }
            waiting.append(contentsOf: deferred.reversed())

            // Transfers the gate paused go on once the run is back within --max-rate. Not reading
            // their sockets is what slows the senders (their receive buffers are small, see start).
            if let gate, gate.wait() == 0 {
                for (handle, (transfer, _)) in active where transfer.paused {
                    transfer.paused = false
                    _ = ccurl_easy_unpause(handle)
                }
            }
            var running: Int32 = 0
            ccurl_multi_perform(multi.value, &running)
            var queued: Int32 = 0
            while let message = ccurl_multi_info_read(multi.value, &queued) {
                guard ccurl_msg_is_done(message) != 0, let handle = ccurl_msg_easy(message),
                      let (transfer, headers) = active.removeValue(forKey: handle) else { continue }
                let code = ccurl_msg_result(message)
                transfer.socket = ccurl_active_socket(handle)
                let redirect = code == CURLE_OK ? Redirects.target(of: handle, status: transfer.status) : nil
                let tls = code == CURLE_OK ? nil : TLSFailure.describe(code, handle: handle, transfer: transfer, options: options)
                ccurl_multi_remove_handle(multi.value, handle)
                recycle(handle, headers)
                if let redirect {
                    transfer.endBody()
                    switch Redirects.follow(transfer, to: redirect) {
                    case .success: waiting.append(transfer)
                    case .failure(let error): settle(transfer, .permanent(error))
                    }
                    continue
                }
                if let tls { transfer.failure = tls }
                // A complete body the transfer held whole goes to a check worker as it is
                // (takeWholeBody only gives up a body that classify passes).
                let wholeBody = code == CURLE_OK ? transfer.takeWholeBody() : nil
                if wholeBody == nil { transfer.endBody() }
                let failure = classify(transfer, code)
                if failure == nil, case .file(let path, let expected) = transfer.sink {
                    nextCheck += 1
                    verifying[nextCheck] = transfer
                    checks.submit(loop: loop, id: nextCheck, path: path, algorithm: expected.algorithm, body: wholeBody)
                } else {
                    settle(transfer, failure)
                }
            }
            for done in checks.collect(loop: loop, idle: active.isEmpty, tail: waiting.isEmpty && drained()) {
                guard let transfer = verifying.removeValue(forKey: done.id) else { continue }
                settle(transfer, mismatch(transfer, done))
            }

            if let progress {
                let t = FileSystem.monotonic()
                if t - lastReport >= 0.1 {
                    lastReport = t
                    progress(active.values.reduce(0) { $0 + $1.0.received })
                }
            }
            // Room for another transfer and a file to fill it: round again at once. Polling here
            // left a loop whose transfers had all finished in one perform (small files) idle, its
            // connections unused, until a check result woke it.
            let canStart = active.count < maxActive && (!exhausted || waiting.contains { $0.notBefore <= FileSystem.monotonic() })
            if !canStart && (!active.isEmpty || !waiting.isEmpty || !verifying.isEmpty) {
                var wait = 100.0
                if let gate, active.values.contains(where: { $0.0.paused }) { wait = max(1, min(wait, gate.wait() * 1000)) }
                if active.isEmpty, verifying.isEmpty, let soonest = waiting.map(\.notBefore).min() {
                    wait = max(1, min(wait, (soonest - FileSystem.monotonic()) * 1000))
                }
                ccurl_multi_poll(multi.value, Int32(wait))
            }
        }
    }

    /// nil: success. Otherwise what went wrong, for the retry policy.
    private func classify(_ transfer: Transfer, _ code: CURLcode) -> AttemptFailure? {
        if let failure = transfer.failure {
            return .permanent(failure)
        }
        if code != CURLE_OK {
            let reason = String(cString: ccurl_easy_strerror(code))
            let message = "\(transfer.label): \(reason) (\(transfer.url))"
            rememberResumePoint(transfer)
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR,
                 CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM,
                 CURLE_SSL_CONNECT_ERROR:
                return .transient(.remote(message))
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
    private func mismatch(_ transfer: Transfer, _ done: HashCheck.Done) -> AttemptFailure? {
        guard case .file(let path, let expected) = transfer.sink else { return nil }
        if let error = done.error { return .permanent(error) }
        guard let actual = done.actual else { return .permanent(FileSystem.failure("cannot read back", path)) }
        guard actual != expected else { return nil }
        transfer.resumeValidator = nil
        transfer.discardPartial()
        return .transient(.integrity("\(transfer.label): hash mismatch, expected \(expected) but got \(actual) (\(transfer.received) bytes from \(transfer.url))"))
    }

    /// A body cut short may be resumed if the server named a validator that If-Range can use.
    private func rememberResumePoint(_ transfer: Transfer) {
        guard case .file = transfer.sink, transfer.received > 0, transfer.headers.acceptRanges else {
            transfer.resumeValidator = nil
            return
        }
        if let etag = transfer.headers.etag, !etag.hasPrefix("W/") {
            transfer.resumeValidator = etag
        } else {
            transfer.resumeValidator = transfer.headers.lastModified
        }
    }

    private func start(_ transfer: Transfer, on multi: MultiHandle) -> Result<(UnsafeMutableRawPointer, UnsafeMutablePointer<curl_slist>?), CenariusError> {
        guard let handle = idleHandles.popLast() ?? ccurl_easy_init() else {
            return .failure(.internal("curl_easy_init failed"))
        }
        let resume = transfer.beginAttempt()
        if let failure = transfer.failure { 
            recycle(handle, nil)
            return .failure(failure)
        }
        transfer.gate = gate
        let user = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_setopt_string(handle, CURLOPT_URL, transfer.url)
        _ = ccurl_setopt_ptr(handle, CURLOPT_WRITEDATA, user)
        _ = ccurl_setopt_ptr(handle, CURLOPT_HEADERDATA, user)
        _ = ccurl_setopt_write_callback(handle) { data, size, count, user in
            let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
            return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = ccurl_setopt_header_callback(handle) { data, size, count, user in
            let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
            return transfer.header(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        // Redirects are followed by the loop (Redirects), which decides per hop whether the
        // --header values may go along: libcurl would send them to any host.
        _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https,file")
        _ = ccurl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        if let share = options.sessions { _ = ccurl_setopt_ptr(handle, CURLOPT_SHARE, share.handle) }
        // libcurl 7.88 never stores the TLS 1.3 session tickets that arrive on an HTTP/2
        // connection (and one that resumed a session there loses it), so a daemon, which keeps
        // sessions to resume them at its next poll, speaks HTTP/1.1: a poll is one small request,
        // where HTTP/2 gains nothing, and an abbreviated handshake instead of a full one saves
        // most of its bytes (B7). Handles are recycled: the version is set on every use.
        _ = ccurl_setopt_long(handle, CURLOPT_HTTP_VERSION, options.sessions != nil ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS)
        if let caFile = options.caFile { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        if let certificate = options.clientCertificate {
            _ = ccurl_setopt_string(handle, CURLOPT_SSLCERT, certificate)
            _ = ccurl_setopt_string(handle, CURLOPT_SSLKEY, options.clientKey ?? certificate)
        }
        if options.maxRate > 0 {
            // About a tenth of a second's worth in the kernel, so that the gate's pauses reach the
            // sender instead of a megabyte-sized buffer absorbing them. (libcurl's own limit,
            // CURLOPT_MAX_RECV_SPEED_LARGE, is per transfer and lets each one's first second through.)
            _ = ccurl_setopt_receive_buffer(handle, Int32(clamping: min(max(options.maxRate / 10, 4096), 256 << 10)))
        } else {
            _ = ccurl_setopt_receive_buffer(handle, 0)
        }
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, options.timeout)
        _ = ccurl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedBytes)
        _ = ccurl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, options.timeout)
        _ = ccurl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent)
        _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        if Self.environmentHasNoProxy {
            _ = ccurl_setopt_string(handle, CURLOPT_PROXY, "")
            _ = ccurl_setopt_string(handle, CURLOPT_NOPROXY, "")
        }
        // Loopback and LAN reads rarely bring more than 64 KiB at once; 128 KiB per handle only
        // added 2 MiB to a seed's peak RSS (B1: 58 → 54 MiB, no change in time).
        _ = ccurl_setopt_long(handle, CURLOPT_BUFFERSIZE, 64 << 10)
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        switch transfer.sink {
        case .memory(let validators):
            if options.sessions != nil {
                // A daemon's poll: its connection is kept for the next one or closed at once
                // (KeptConnections), and probes of an idle connection that libcurl would not
                // reuse anyway only cost bytes.
                _ = ccurl_setopt_long(handle, CURLOPT_FORBID_REUSE, transfer.keepConnection ? 0 : 1)
                _ = ccurl_setopt_long(handle, CURLOPT_MAXAGE_CONN, KeptConnections.maxIdle)
                _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPIDLE, KeptConnections.maxIdle + 2)
            }
            // Tables compress well; files are fetched as identity so that Range offsets are file offsets.
            _ = ccurl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")
            // A server ignores If-Modified-Since beside If-None-Match (RFC 9110, 13.1.3): the date
            // goes only to an origin that gave no ETag. Every byte counts in a poll (B7).
            if let etag = validators?.etag {
                headers = ccurl_slist_append(headers, "If-None-Match: \(etag)")
            } else if let date = validators?.lastModified {
                headers = ccurl_slist_append(headers, "If-Modified-Since: \(date)")
            }
        case .file:
            if let resume {
                _ = ccurl_setopt_string(handle, CURLOPT_RANGE, "\(resume.range)-")
                headers = ccurl_slist_append(headers, "If-Range: \(resume.ifRange)")
            }
        }
        // libcurl's "Accept: */*" says what no header says too (RFC 9110, 12.5.1).
        headers = ccurl_slist_append(headers, "Accept:")
        if !options.headers.isEmpty, let host = Remote.authority(of: transfer.url), options.headerHosts.contains(host) {
            for header in options.headers { headers = ccurl_slist_append(headers, header) }
        }
        if let headers { _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers) }
        let added = ccurl_multi_add_handle(multi.value, handle)
        guard added == CURLM_OK else {
            recycle(handle, headers)
            return .failure(.internal("curl_multi_add_handle: \(String(cString: ccurl_multi_strerror(added)))"))
        }
        return .success((handle, headers))
    }

    /// libcurl looks for proxy variables in the environment at every transfer (up to seven
    /// getenv calls). When none is set, an empty proxy and no-proxy list say the same once.
    private static let environmentHasNoProxy = (["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] as [String])
        .allSatisfy { name in getenv(name) == nil }

    /// Gives a helper downloader to the thread that runs its loop; nothing else touches it until
    /// that loop has finished and `download` has waited for it.
    private struct LoopHandoff: @unchecked Sendable {
        let downloader: Downloader
    }

    private func recycle(_ handle: UnsafeMutableRawPointer, _ headers: UnsafeMutablePointer<curl_slist>?) {
        if let headers { ccurl_slist_free_all(headers) }
        ccurl_easy_reset(handle)
        idleHandles.append(handle)
    }
}
