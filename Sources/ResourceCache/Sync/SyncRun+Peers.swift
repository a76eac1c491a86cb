import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// Store objects from LAN peers (`--peer`, docs/peers.md): the first of a sync's sources for a
/// file's exact bytes, before the origin and its mirrors with their forms and packs. A peer is a
/// remote that holds only `_cenarius/f/<hash>` and nothing of the release's word: the head and
/// table always come from the origin, and each object is checked against the hash the signed
/// table names before it is adopted (a wrong byte never reaches the store). Whatever a peer does
/// not give — missing, failed, stalled, wrong — is left for the origin in the same sync.
extension SyncRun {
    /// Gets what the usable peers hold of `entries` into the store; returns what is left. Files a
    /// busy peer (503, `Retry-After`) turned away are asked again after a second, a few times, before
    /// they are left for the origin: a LAN of devices installing at once then waits its turn at the
    /// peers rather than all taking the uplink (ChromeOS waits for a LAN slot the same way).
    func fromPeers(_ entries: [RouteEntry], into objects: ObjectStore, report: inout SyncReport,
                   progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> [RouteEntry] {
        guard !entries.isEmpty, let downloader = try? Downloader(options: Self.peerOptions(settings.transfer)) else { return entries }
        var wanted = entries
        var left: [RouteEntry] = []
        for round in 0...PeerSources.busyRounds {
            let peers = settings.peers.health.usable(settings.peers.urls, now: FileSystem.monotonic())
            guard !wanted.isEmpty, !peers.isEmpty, !isCancelled else { break }
            if round > 0 { usleep(UInt32(PeerSources.busyWait * 1e6)) }
            let busy = try fromPeers(wanted, peers: peers, downloader: downloader, into: objects, report: &report, progress: progress, left: &left)
            wanted = busy
        }
        return left + wanted
    }

    /// One round: `left` gains what failed or is missing, and what busy peers turned away is returned.
    private func fromPeers(_ entries: [RouteEntry], peers: [String], downloader: Downloader, into objects: ObjectStore, report: inout SyncReport,
                           progress: ((TransferProgress) -> Void)?, left: inout [RouteEntry]) throws(CenariusError) -> [RouteEntry] {
        let chosen = PeerChoice.assign(entries.count, to: peers, start: Int.random(in: 0..<peers.count))
        let files = zip(entries, chosen).map { entry, peer in
            var file = FileDownload(url: peer + "/" + ReleaseIndex.plainPath(entry.hash), destination: objects.temporaryPath(entry.hash),
                                    expected: entry.hash, label: entry.uri.value, size: entry.size)
            file.source = peer
            return file
        }
        let results = downloader.download(files, cancel: cancel, progress: progress)
        var verified: [(temporary: String, hash: ContentHash)] = []
        var busy: [RouteEntry] = []
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
                if isCancelled {
                    left.append(entries[index])
                } else if error.retryAfter != nil {
                    // Busy, not failing: asked again, and not held against it.
                    busy.append(entries[index])
                } else {
                    left.append(entries[index])
                    if error.code == .integrity {
                        settings.peers.health.record(.wrongBytes, peer: chosen[index], now: FileSystem.monotonic())
                    } else if !error.isMissingRemoteFile {
                        settings.peers.health.record(.fault, peer: chosen[index], now: FileSystem.monotonic())
                    }
                }
            }
        }
        if !verified.isEmpty { effect(.downloads) }
        try objects.adoptAll(verified, in: cache)
        return busy
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
