import ReportHeader
import Tracing
package import RouteSync
package import Transport
#if canImport(Glibc)
import Glibc
#endif

/// One sync: fetch the table conditionally, plan, download what is missing, build a new
/// generation and switch to it atomically. Blocking; run it off any async executor.
package struct Syncer: Sendable {
    package let settings: SyncSettings
    /// Who asked for this sync's switch (the install policy's `--switch-at start`, a forced switch).
    package var switching: InstallPolicy.Switching = .scheduled

    package init(settings: SyncSettings) {
        self.settings = settings
    }

    var layout: CacheLayout { settings.cache }

    /// One trace per sync (docs/telemetry.md): its span says the outcome and the bytes; the
    /// steps' spans are its children, and its requests carry its `traceparent`.
    package func sync(cancel: CancelToken? = nil, progress: ((TransferProgress) -> Void)? = nil) throws(CenariusError) -> SyncReport {
        try Traced.span("cenarius.sync") { span throws(CenariusError) in
            do throws(CenariusError) {
                let report = try untracedSync(cancel: cancel, progress: progress)
                report.traceAttributes(span, channel: settings.channel)
                return report
            } catch {
                span.attributes["cenarius.channel"] = SpanAttribute.string(settings.channel)
                span.attributes["cenarius.error.code"] = SpanAttribute.string(error.code.name)
                span.attributes["cenarius.error.exit_code"] = SpanAttribute.int64(Int64(error.code.rawValue))
                throw error
            }
        }
    }

    private func untracedSync(cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> SyncReport {
        let remotes = try settings.requireRemotes()
        // A cache that holds only the record of a failed first sync is as fresh as none.
        let fresh = !FileSystem.exists(layout.root) || FileSystem.listDirectory(layout.root) == ["last-sync.json"]
        _ = try OpenedCache(layout: layout)
        let lock: WriterLock
        do { lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: "sync") } catch {
            LastSync.record(.failure(error), layout: layout)
            throw error
        }
        defer { withExtendedLifetime(lock) {} }
        do {
            let report = try locked(remotes: remotes, cancel: cancel, progress: progress)
            effect(.lastSync)
            LastSync.record(.success(report), layout: layout)
            return report
        } catch {
            if fresh { removeEmptyCache(lock) }
            // Recorded by a first sync too: a device provisioned with the wrong remote, channel or
            // key says so in `why` (docs/why.md), where it would say nothing had run.
            effect(.lastSync)
            LastSync.record(.failure(error), layout: layout)
            throw error
        }
    }

    /// A refresh triggered by a lookup: at most one per `minRefetch` seconds across all
    /// processes. Callers that wait on the lock behind another refresh share its result
    /// (single-flight) instead of asking the origin again. nil: skipped, a refresh just ran.
    package func refetch(cancel: CancelToken? = nil) throws(CenariusError) -> SyncReport? {
        let remotes = try settings.requireRemotes()
        _ = try OpenedCache(layout: layout)
        let lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: "refresh the table")
        defer { withExtendedLifetime(lock) {} }
        if let last = FileSystem.modificationTime(layout.attempted), FileSystem.now() - last < settings.minRefetch {
            return nil
        }
        do {
            let report = try locked(remotes: remotes, cancel: cancel, progress: nil)
            effect(.lastSync)
            LastSync.record(.success(report), layout: layout)
            return report
        } catch {
            effect(.lastSync)
            LastSync.record(.failure(error), layout: layout)
            throw error
        }
    }

    private func locked(remotes: [Remote], cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> SyncReport {
        let started = FileSystem.monotonic()
        effect(.attempted)
        FileSystem.touch(layout.attempted)
        // Opened again under the lock, repairing whatever was planted meanwhile (G5).
        // With the lock held nobody else is writing: anything in tmp/ is left over from a crash (G3).
        let cache = try cleanTemporaries(try OpenedCache(layout: layout))
        var transfer = settings.transfer
        transfer.traceparent = Traced.traceparent
        let downloader = try Downloader(options: transfer)
        return try Mirrors.first(remotes) { (remote, others) throws(Mirrors.Failure) in
            var run = SyncRun(syncer: self, remote: remote, mirrors: others, cache: cache, downloader: downloader, started: started,
                              cancel: cancel, progress: progress)
            do throws(CenariusError) {
                do throws(CenariusError) {
                    return try run.run()
                } catch where run.attempt.tableFromForm && !run.attempt.pastTable && error.code == .integrity && !run.isCancelled {
                    // The compressed table gave a table its signature or manifest refuses (left
                    // over from an earlier publish, or stale at one edge): never adopted nor
                    // stopped at while the table itself can be had (docs/release-bytes.md). It is
                    // forgotten, so later polls ask for the table with the table's own validators.
                    forgetTableForm()
                    run.attempt = TableAttempt(formsAllowed: false)
                    return try run.run()
                }
            } catch {
                // A mirror that cannot give a good table, signature or manifest: the next one may.
                // Files are already taken from every mirror in turn, so a later failure is final.
                throw Mirrors.Failure(error, final: run.attempt.pastTable || run.isCancelled)
            }
        }
    }

    /// A new table this device will not adopt (invalid, badly signed, replayed) is reported as refused;
    /// the error goes on unchanged.
    func refused(_ table: [UInt8], manifest: ReleaseManifest?, _ error: CenariusError, attempt: TableAttempt) -> CenariusError {
        // A table from the compressed form is not the remote's word yet: the table itself is asked for next.
        if error.code == .integrity, !attempt.tableFromForm {
            effect(.failedRelease)
            FailedReleases(layout: layout).record(manifest?.release ?? FleetReport.releaseName(ofTable: table))
        }
        return error
    }


    /// A first sync that failed with nothing kept leaves no cache structure behind, only the
    /// folder and the record of the failure its caller writes next (`last-sync.json`, which `why`
    /// answers from); files it verified before failing are kept (G3), and then so is the cache.
    private func removeEmptyCache(_ lock: WriterLock) {
        for path in [layout.tmp, layout.objects, layout.generations] {
            guard rmdir(path) == 0 else { return }
        }
        unlink(layout.attempted)
        unlink(layout.checked)
        unlink(layout.lastPoll)
        unlink(layout.headState)
        unlink(layout.presetIndex)
        lock.removeFile()
    }

    /// Empties `tmp/` by descriptor: a link planted there is removed, never followed (G5).
    /// A folder that once held a first install's thousands of downloads keeps its size (ext4
    /// never shrinks a directory) and every later listing reads all of it — 2.7 ms of each
    /// unchanged sync after 20,000 files (B2) — so such a folder, once empty, is made anew.
    func cleanTemporaries(_ cache: OpenedCache) throws(CenariusError) -> OpenedCache {
        cache.tmp.removeChildren()
        cache.root.remove("current.next")
        guard let info = cache.root.status("tmp"), info.st_size > Self.largeFolderBytes else { return cache }
        cache.root.remove("tmp")
        return try OpenedCache(layout: layout)
    }

    /// A directory's size past which it is made anew once empty (a few thousand entries' worth).
    static let largeFolderBytes = 256 << 10

    func markChecked() {
        effect(.checked)
        FileSystem.touch(layout.checked)
    }

    /// Tells the observer (tests, the kill hook) of an effect about to be made.
    func effect(_ effect: SyncEffect) {
        settings.effects?.before(effect)
    }

    /// `head.json`, its writes announced.
    var heads: HeadStore { HeadStore(layout: layout, effects: settings.effects) }

    /// The release waiting in `pending/` is no longer waiting (it is in force, or just switched to).
    func clearPending() {
        let pending = PendingStore(layout: layout)
        guard !pending.isEmpty else { return }
        effect(.pendingCleared)
        pending.clear()
    }

    private func freeBytes() -> Int64? {
        var info = statvfs()
        guard statvfs(layout.root, &info) == 0 else { return nil }
        guard let blocks = Int64(exactly: info.f_bavail), let size = Int64(exactly: info.f_frsize) else { return .max }
        let (bytes, overflow) = blocks.multipliedReportingOverflow(by: size)
        return overflow ? .max : bytes
    }

    /// The download plus the reserve, saturating: `needed` may be `Int64.max` (sizes past any disk).
    private func required(_ needed: Int64?) -> Int64 {
        let (sum, overflow) = (needed ?? 0).addingReportingOverflow(settings.minFreeBytes)
        return overflow ? .max : sum
    }

    func hasFreeSpace(needed: Int64?) -> Bool {
        guard let free = freeBytes() else { return true }
        return free >= required(needed)
    }

    func checkFreeSpace(needed: Int64?) throws(CenariusError) {
        guard let free = freeBytes() else { return }
        if free < required(needed) {
            let what = needed.map { $0 == .max ? "more bytes than any disk holds (the table's sizes) plus " : "\($0) bytes to download plus " } ?? ""
            throw .storage("not enough free space in \(layout.root): \(free) bytes free, need \(what)\(settings.minFreeBytes) bytes reserve")
        }
    }
}
