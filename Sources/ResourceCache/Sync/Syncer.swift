import ReportHeader
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

    package func sync(cancel: CancelToken? = nil, progress: ((TransferProgress) -> Void)? = nil) throws(CenariusError) -> SyncReport {
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
        let downloader = try Downloader(options: settings.transfer)
        return try Mirrors.first(remotes) { (remote, others) throws(Mirrors.Failure) in
            var attempt = TableAttempt()
            do throws(CenariusError) {
                do throws(CenariusError) {
                    return try sync(from: remote, mirrors: others, cache: cache, downloader: downloader, started: started,
                                    attempt: &attempt, cancel: cancel, progress: progress)
                } catch where attempt.tableFromForm && !attempt.pastTable && error.code == .integrity && !(cancel?.isCancelled ?? false) {
                    // The compressed table gave a table its signature or manifest refuses (left
                    // over from an earlier publish, or stale at one edge): never adopted nor
                    // stopped at while the table itself can be had (docs/release-bytes.md). It is
                    // forgotten, so later polls ask for the table with the table's own validators.
                    forgetTableForm()
                    attempt = TableAttempt(formsAllowed: false)
                    return try sync(from: remote, mirrors: others, cache: cache, downloader: downloader, started: started,
                                    attempt: &attempt, cancel: cancel, progress: progress)
                }
            } catch {
                // A mirror that cannot give a good table, signature or manifest: the next one may.
                // Files are already taken from every mirror in turn, so a later failure is final.
                throw Mirrors.Failure(error, final: attempt.pastTable || (cancel?.isCancelled ?? false))
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


    /// One sync from `remote` in three steps — offer, stage, switch — each of which may end it.
    /// Their order is the crash-safety contract: nothing the offer reads is written before the
    /// release is checked, nothing is current before every file is verified in the store, and
    /// the switch is one rename under the holds' lock (G1, G3, G10).
    private func sync(from remote: Remote, mirrors: [Remote], cache: OpenedCache, downloader: Downloader, started: Double, attempt: inout TableAttempt,
                      cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> SyncReport {
        let offer: Offer
        switch try self.offer(from: remote, downloader: downloader, started: started, attempt: &attempt, cancel: cancel) {
        case .ended(let report): return report
        case .offered(let offered): offer = offered
        }
        attempt.pastTable = true
        switch try stage(offer, mirrors: mirrors, cache: cache, downloader: downloader, started: started, formsAllowed: attempt.formsAllowed,
                         cancel: cancel, progress: progress) {
        case .held(let report): return report
        case .staged(let staged): return try switchTo(staged, started: started)
        }
    }

    /// `stored`: files whose exact bytes the remote's store holds, fetched there (an immutable
    /// name a CDN caches for good) and at their uri only when that fails.
    func download(_ entries: [RouteEntry], stored: Set<ContentHash> = [], remote: Remote, mirrors: [Remote], with downloader: Downloader, into objects: ObjectStore,
                  cache: OpenedCache, report: inout SyncReport, cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) {
        guard !entries.isEmpty else { return }
        let files = entries.map { entry in
            let atURI = [remote.fileURL(entry.uri)] + mirrors.map { $0.fileURL(entry.uri) }
            let urls = stored.contains(entry.hash) ? [remote.objectURL(ReleaseIndex.plainPath(entry.hash))] + atURI : atURI
            return FileDownload(url: urls[0], destination: objects.temporaryPath(entry.hash), expected: entry.hash,
                                label: entry.uri.value, size: entry.size, mirrors: Array(urls.dropFirst()))
        }
        let results = downloader.download(files, cancel: cancel, progress: progress)
        var firstError: CenariusError?
        var failed = 0
        var verified: [(temporary: String, hash: ContentHash)] = []
        for (file, result) in zip(files, results) {
            switch result {
            case .success(let bytes):
                verified.append((file.destination, file.expected))
                report.downloadedFiles += 1
                report.downloadedBytes += bytes
                report.bytesHeld += bytes
            case .failure(let error):
                cache.tmp.remove(String(file.destination.dropFirst(layout.tmp.count + 1)))
                failed += 1
                if firstError == nil || (firstError!.code == .remote && error.code != .remote) { firstError = error }
            }
        }
        report.bytesFetched += downloader.lastBytesOnWire
        // Every verified file is kept, even when others failed, so the next sync fetches only those (G3).
        if !verified.isEmpty { effect(.downloads) }
        try objects.adoptAll(verified, in: cache)
        if let firstError {
            let others = failed > 1 ? " (and \(failed - 1) more failed files)" : ""
            throw firstError.appending(others + "; the previous generation stays in force")
        }
    }

    /// Assembles `generations/<n>.building`: the exact table bytes, meta, and a hard link per
    /// cached uri (a copy when the object has all the links its file system allows). Every
    /// folder is made and every link placed relative to an opened folder (G5).
    func build(number: Int, table: RouteTable, tableBytes: [UInt8], plan: SyncPlan, cache: OpenedCache, meta: GenerationMeta) throws(CenariusError) -> String {
        let name = "\(number).building"
        cache.generations.remove(name)
        guard let building = try cache.generations.folder(name), let files = try building.folder("files") else {
            throw .storage("cannot create directory \(layout.building(number))")
        }
        var meta = meta
        var bytes: Int64 = 0
        var shards: [Substring: CacheFolder] = [:]
        // Tables list a folder's files together: the last folder is kept open, not every one.
        var lastFolder: (relative: Substring, folder: CacheFolder) = ("", files)
        for entry in plan.cached {
            let uri = entry.uri.value
            let slash = uri.utf8.lastIndex(of: UInt8(ascii: "/"))
            let relative = slash.map { uri[..<$0] } ?? ""
            let leaf = slash.map { String(uri[uri.index(after: $0)...]) } ?? uri
            if relative != lastFolder.relative { lastFolder = (relative, try files.folders(relative)) }
            let hex = entry.hash.hex
            let shardName = hex.prefix(2)
            if shards[shardName] == nil { shards[shardName] = try cache.shard(of: entry.hash, create: false) }
            guard let shard = shards[shardName], let info = shard.status(hex), info.st_mode & S_IFMT == S_IFREG else {
                throw .storage("corrupt cache: object \(layout.object(entry.hash)) for \(entry.uri) is missing")
            }
            try place(hex, from: shard, as: leaf, in: lastFolder.folder, uri: entry.uri)
            bytes += Int64(info.st_size)
        }
        meta.cachedBytes = bytes
        let path = layout.building(number)
        try GenerationIndex.write(table, fromPreset: Set(plan.fromPreset.map(\.uri)),
                                  presetIdentity: GenerationIndex.presetIdentity(settings.preset), to: path + "/index")
        try building.write(tableBytes, to: "Routes.json", durable: false)
        try building.write(meta.encoded(), to: "meta.json", durable: false)
        return path
    }

    /// A hard link to the object, or a copy of it when the object already has as many links as
    /// its file system allows (EMLINK: ext4 stops at 65,000, reached by identical content in
    /// many uris across kept generations).
    private func place(_ hex: String, from shard: CacheFolder, as leaf: String, in folder: CacheFolder, uri: URIPath) throws(CenariusError) {
        if shard.link(hex, to: folder, as: leaf) { return }
        guard errno == EMLINK else { throw FileSystem.failure("cannot link \(uri) into", folder.path) }
        try shard.copy(hex, to: folder, as: leaf)
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
