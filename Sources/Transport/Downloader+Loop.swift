import RouteSync
import CCurl

extension Downloader {
    /// One download loop: its transfers and the rounds that move them on. A round cancels
    /// everything when asked to, starts what may start, lets paused transfers go on under
    /// `--max-rate`, runs libcurl and takes the transfers it finished (redirects followed, bodies
    /// handed to the hash checks), takes the checks' results, reports progress, and waits for
    /// sockets or results when there is nothing to start.
    ///
    /// `drained`: `more` has nothing left for anyone (other loops share it; true from the moment
    /// `more` first gives nil), so this loop's finished files need not wait for a fuller batch.
    /// `progress` hears, at most every 0.1 s, the bytes received by the transfers still running.
    final class Loop {
        typealias Active = (transfer: Transfer, headers: UnsafeMutablePointer<curl_slist>?)

        /// Where the loop's transfers come from: `initial`, then `more` until it gives nil.
        struct Feed {
            var initial: [Transfer] = []
            var more: () -> Transfer? = { nil }
            var drained: () -> Bool = { true }
        }

        /// What the loop runs on: its multi handle, its index among the download's loops (the
        /// hash checks' lane), and its share of the connections.
        struct Lane {
            let multi: MultiHandle
            let index: Int
            let checks: HashCheck
            let connections: Int
            let cancel: CancelToken?
        }

        /// What the loop tells its caller: progress, and each transfer as it ends.
        struct Listener {
            var progress: ((Int64) -> Void)?
            let finished: (Transfer, Result<Void, CenariusError>) -> Void
        }

        private let downloader: Downloader
        private let multi: MultiHandle
        private let more: () -> Transfer?
        private let drained: () -> Bool
        private let index: Int
        private let checks: HashCheck
        private let maxActive: Int
        private let cancel: CancelToken?
        private let progress: ((Int64) -> Void)?
        private let finished: (Transfer, Result<Void, CenariusError>) -> Void

        /// A stack: retried transfers are pushed on top with a notBefore.
        private var waiting: [Transfer]
        /// `more` has given nil once.
        private var exhausted = false
        private var active: [UnsafeMutableRawPointer: Active] = [:]
        /// Files whose body is complete, being hashed on another thread, by check id.
        private var verifying: [Int: Transfer] = [:]
        private var nextCheck = 0
        private var lastReport = 0.0

        init(_ downloader: Downloader, feed: Feed, lane: Lane, listener: Listener) {
            self.downloader = downloader
            multi = lane.multi
            more = feed.more
            drained = feed.drained
            index = lane.index
            checks = lane.checks
            maxActive = max(1, lane.connections * 2)
            cancel = lane.cancel
            progress = listener.progress
            finished = listener.finished
            waiting = feed.initial.reversed()
        }

        func run() {
            while !waiting.isEmpty || !active.isEmpty || !verifying.isEmpty || !exhausted {
                if cancel?.isCancelled == true {
                    cancelAll()
                    return
                }
                startWhatMayStart()
                resumePaused()
                perform()
                takeCheckResults()
                reportProgress()
                waitIfNothingCanStart()
            }
        }

        private func fresh() -> Transfer? {
            guard !exhausted else { return nil }
            if let transfer = more() { return transfer }
            exhausted = true
            return nil
        }

        private func cancelAll() {
            let cancelled = { (transfer: Transfer) in self.complete(transfer, .failure(CenariusError(.remote, "\(transfer.label): cancelled", cause: .cancelled))) }
            for (handle, (transfer, headers)) in active {
                ccurl_multi_remove_handle(multi.value, handle)
                downloader.recycle(handle, headers)
                cancelled(transfer)
            }
            active.removeAll()
            waiting.forEach(cancelled)
            waiting.removeAll()
            while let transfer = fresh() { cancelled(transfer) }
            verifying.values.forEach(cancelled)
            verifying.removeAll()
        }

        private func startWhatMayStart() {
            let now = FileSystem.monotonic()
            var deferred: [Transfer] = []
            while active.count < maxActive, let next = waiting.popLast() ?? fresh() {
                if next.notBefore > now {
                    deferred.append(next)
                    continue
                }
                next.budget = checks.budget
                switch downloader.start(next, on: multi) {
                case .success(let pair): active[pair.0] = (next, pair.1)
                case .failure(let error): complete(next, .failure(error))
                }
            }
            waiting.append(contentsOf: deferred.reversed())
        }

        /// Transfers the gate paused go on once the run is back within --max-rate. Not reading
        /// their sockets is what slows the senders (their receive buffers are small, see start).
        private func resumePaused() {
            guard let gate = downloader.gate, gate.wait() == 0 else { return }
            for (handle, (transfer, _)) in active where transfer.paused {
                transfer.paused = false
                _ = ccurl_easy_unpause(handle)
            }
        }

        /// libcurl's turn, then the transfers it finished.
        private func perform() {
            var running: Int32 = 0
            ccurl_multi_perform(multi.value, &running)
            var queued: Int32 = 0
            while let message = ccurl_multi_info_read(multi.value, &queued) {
                guard ccurl_msg_is_done(message) != 0, let handle = ccurl_msg_easy(message),
                      let (transfer, headers) = active.removeValue(forKey: handle) else { continue }
                finish(transfer, handle: handle, headers: headers, code: ccurl_msg_result(message))
            }
        }

        private func finish(_ transfer: Transfer, handle: UnsafeMutableRawPointer, headers: UnsafeMutablePointer<curl_slist>?, code: CURLcode) {
            transfer.socket = ccurl_active_socket(handle)
            let redirect = code == CURLE_OK ? Redirects.target(of: handle, status: transfer.status) : nil
            let named = code == CURLE_OK ? nil
            : TLSFailure.describe(code, handle: handle, transfer: transfer, options: downloader.options)
                ?? ProxyFailure.describe(code, handle: handle, transfer: transfer)
            ccurl_multi_remove_handle(multi.value, handle)
            downloader.recycle(handle, headers)
            if let redirect {
                transfer.endBody()
                switch Redirects.follow(transfer, to: redirect) {
                case .success: waiting.append(transfer)
                case .failure(let error): settle(transfer, .permanent(error))
                }
                return
            }
            if let named { transfer.failure = named }
            // A complete body the transfer held whole goes to a check worker as it is
            // (takeWholeBody only gives up a body that classify passes).
            let wholeBody = code == CURLE_OK ? transfer.takeWholeBody() : nil
            if wholeBody == nil { transfer.endBody() }
            let failure = downloader.classify(transfer, code)
            // A slice is a part of an object: what it holds is checked where it is decoded.
            if failure == nil, case .file(let path, let expected) = transfer.sink, transfer.slice == nil {
                nextCheck += 1
                verifying[nextCheck] = transfer
                checks.submit(loop: index, id: nextCheck, path: path, algorithm: expected.algorithm, body: wholeBody)
            } else {
                settle(transfer, failure)
            }
        }

        private func takeCheckResults() {
            for done in checks.collect(loop: index, idle: active.isEmpty, tail: waiting.isEmpty && drained()) {
                guard let transfer = verifying.removeValue(forKey: done.id) else { continue }
                settle(transfer, downloader.mismatch(transfer, done))
            }
        }

        private func reportProgress() {
            guard let progress else { return }
            let now = FileSystem.monotonic()
            guard now - lastReport >= 0.1 else { return }
            lastReport = now
            progress(active.values.reduce(0) { $0 + $1.transfer.received })
        }

        /// Room for another transfer and a file to fill it: round again at once. Polling here
        /// left a loop whose transfers had all finished in one perform (small files) idle, its
        /// connections unused, until a check result woke it.
        private func waitIfNothingCanStart() {
            let canStart = active.count < maxActive && (!exhausted || waiting.contains { $0.notBefore <= FileSystem.monotonic() })
            guard !canStart, !active.isEmpty || !waiting.isEmpty || !verifying.isEmpty else { return }
            var wait = 100.0
            if let gate = downloader.gate, active.values.contains(where: { $0.transfer.paused }) { wait = max(1, min(wait, gate.wait() * 1000)) }
            if active.isEmpty, verifying.isEmpty, let soonest = waiting.map(\.notBefore).min() {
                wait = max(1, min(wait, (soonest - FileSystem.monotonic()) * 1000))
            }
            ccurl_multi_poll(multi.value, Int32(Whole.clamped(wait, to: 1...100)))
        }

        /// After an attempt: done, retried later, tried on the next mirror, or given up.
        private func settle(_ transfer: Transfer, _ failure: AttemptFailure?) {
            guard let failure else { return complete(transfer, .success(())) }
            let policy = transfer.policy ?? downloader.policy
            // A successful answer's body that broke off, with a validator to resume it by (also when
            // the attempt to resume it got no answer at all: status 0).
            let resumable = transfer.resumeValidator != nil && transfer.received > 0 && (transfer.isSuccessStatus || transfer.status == 0)
            switch policy.decide(failure, attempt: transfer.attempt, random: Double.random(in: 0..<1, using: &downloader.random), resumable: resumable) {
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

        private func complete(_ transfer: Transfer, _ outcome: Result<Void, CenariusError>) {
            transfer.closeFile()
            finished(transfer, outcome)
        }
    }
}
