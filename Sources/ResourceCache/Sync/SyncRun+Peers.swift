import RouteSync
import Transport

/// Store objects from LAN peers (`--peer`, docs/peers.md): the first of a sync's sources for a
/// file's exact bytes, before the origin and its mirrors with their forms and packs. A peer is a
/// remote that holds only `_cenarius/f/<hash>` and nothing of the release's word: the head and
/// table always come from the origin, and each object is checked against the hash the signed
/// table names before it is adopted (a wrong byte never reaches the store). Whatever a peer does
/// not give — missing, failed, stalled, wrong — is left for the origin in the same sync.
extension SyncRun {
    /// Gets what the usable peers hold of `entries` into the store; returns what is left.
    func fromPeers(_ entries: [RouteEntry], into objects: ObjectStore, report: inout SyncReport,
                   progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> [RouteEntry] {
        let peers = settings.peers.health.usable(settings.peers.urls, now: FileSystem.monotonic())
        guard !entries.isEmpty, !peers.isEmpty, let downloader = try? Downloader(options: Self.peerOptions(settings.transfer)) else { return entries }
        let chosen = PeerChoice.assign(entries.count, to: peers, start: Int.random(in: 0..<peers.count))
        let files = zip(entries, chosen).map { entry, peer in
            var file = FileDownload(url: peer + "/" + ReleaseIndex.plainPath(entry.hash), destination: objects.temporaryPath(entry.hash),
                                    expected: entry.hash, label: entry.uri.value, size: entry.size)
            file.source = peer
            return file
        }
        let results = downloader.download(files, cancel: cancel, progress: progress)
        var verified: [(temporary: String, hash: ContentHash)] = []
        var left: [RouteEntry] = []
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let bytes):
                verified.append((files[index].destination, files[index].expected))
                report.downloadedFiles += 1
                report.downloadedBytes += bytes
                report.bytesHeld += bytes
                report.bytesFetched += bytes
                report.bytesFromPeers += bytes
            case .failure(let error):
                cache.tmp.remove(String(files[index].destination.dropFirst(layout.tmp.count + 1)))
                left.append(entries[index])
                if isCancelled { continue }
                if error.code == .integrity {
                    settings.peers.health.record(.wrongBytes, peer: chosen[index], now: FileSystem.monotonic())
                } else if !error.isMissingRemoteFile {
                    settings.peers.health.record(.fault, peer: chosen[index], now: FileSystem.monotonic())
                }
            }
        }
        if !verified.isEmpty { effect(.downloads) }
        try objects.adoptAll(verified, in: cache)
        return left
    }

    /// A peer is on the LAN: it connects in well under a second and sends fast, or the origin is
    /// the better source. One attempt (the origin is the retry), no `--header` (those are the
    /// origin's credentials), a few connections per peer (its own cap is `--peer-max-connections`).
    static func peerOptions(_ transfer: TransferOptions) -> TransferOptions {
        var options = transfer
        options.timeout = PeerSources.timeout
        options.lowSpeedBytes = PeerSources.lowSpeedBytes
        options.attempts = 1
        options.documentAttempts = 1
        options.headers = []
        options.headerHosts = []
        options.sessions = nil
        options.connections = PeerSources.connections
        options.loops = 1
        options.waitsForMultiplexing = false
        return options
    }
}
