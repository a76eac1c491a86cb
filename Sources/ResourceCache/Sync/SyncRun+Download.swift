import RouteSync
import Transport

extension SyncRun {
    /// `stored`: files whose exact bytes the remote's store holds, fetched there (an immutable
    /// name a CDN caches for good) and at their uri only when that fails.
    func download(_ entries: [RouteEntry], stored: Set<ContentHash>, into objects: ObjectStore, report: inout SyncReport,
                  progress: ((TransferProgress) -> Void)?) throws(CenariusError) {
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
}
