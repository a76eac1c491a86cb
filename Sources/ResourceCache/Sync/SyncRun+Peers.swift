import Tracing
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
    /// `entries` split into this device's share (the objects it owns among its peers, which it
    /// takes from the origin for them) and the rest (asked of their owners, as `owners` says).
    /// Without `me` in the list, or with no usable peer, nothing is its own: what peers do not give
    /// is the origin's anyway.
    func peerShares(_ entries: [RouteEntry], in fetch: ObjectFetch) -> (mine: [RouteEntry], theirs: [RouteEntry], owners: PeerShares) {
        let usable = usablePeers
        let owners = PeerShares(entries, among: usable + (settings.peers.me.map { [$0] } ?? []), bytes: fetch.formBytes)
        guard let me = settings.peers.me, !usable.isEmpty else { return ([], entries, owners) }
        var shares: (mine: [RouteEntry], theirs: [RouteEntry], owners: PeerShares) = ([], [], owners)
        for entry in entries {
            if owners.owner(of: entry.hash) == me { shares.mine.append(entry) } else { shares.theirs.append(entry) }
        }
        return shares
    }

    /// The peers asked now: not avoided, and naming this release when found by DNS-SD (PeerSources.asks).
    var usablePeers: [String] {
        let peers = settings.peers
        return peers.health.usable(peers.urls.filter(peers.asks), now: FileSystem.monotonic())
    }

    /// How `fromPeers` asks. With `waiting`, objects a peer turned away with "later" are asked again
    /// for up to `notYetWait` seconds; with `owner`, only that peer is asked; while `patient` says
    /// so, a `404` or a refused connection is "not yet" too. With `adoptLater`, what checks out is
    /// left there for the caller to adopt, else adopted after each round.
    struct PeerAsking {
        var waiting: Bool
        var owner: String?
        var patient: (@Sendable () -> Bool)?
        var adoptLater: VerifiedFiles?
        init(waiting: Bool, owner: String? = nil, patient: (@Sendable () -> Bool)? = nil, adoptLater: VerifiedFiles? = nil) {
            (self.waiting, self.owner, self.patient, self.adoptLater) = (waiting, owner, patient, adoptLater)
        }
    }

    /// `fromPeers` in a span of its own.
    func fromPeersTraced(_ entries: [RouteEntry], _ how: PeerAsking, forms: inout PeerFormAsk?,
                         in fetch: ObjectFetch, report: inout SyncReport) throws(CenariusError) -> [RouteEntry] {
        guard !entries.isEmpty else { return entries }
        return try Traced.span("cenarius.download.peers") { span throws(CenariusError) in
            let before = report.bytesFromPeers
            let wanted = try fromPeers(entries, how, forms: &forms, in: fetch, report: &report)
            span.attributes["cenarius.files"] = SpanAttribute.int64(Int64(entries.count - wanted.count))
            span.attributes["cenarius.bytes.fetched"] = SpanAttribute.int64(report.bytesFromPeers - before)
            return wanted
        }
    }

    /// Gets what the usable peers hold of `entries` into the store; returns what is left. Each
    /// object is asked of the peer of highest weight for it (PeerChoice: its owner, when this
    /// device is in the list). With `waiting`, objects a peer turned away with "later" (503,
    /// `Retry-After`: it is busy, or still fetching them itself) are asked again every half second
    /// for up to `notYetWait` seconds before they are left for the origin: devices installing at
    /// once wait for each other's shares rather than all take the uplink (ChromeOS waits for a LAN
    /// slot the same way). Without it (this device's own share, asked once in case a peer already
    /// holds it) "later" means the origin, now. With `forms`, a file is asked as the form its owner
    /// kept (PeerFormAsk), and as its exact bytes once the owner says it has no such form. While
    /// `patient` says so (this device's own share is still arriving: its peers, started with it,
    /// may not have begun their syncs or opened their listeners), a `404` or a refused connection
    /// is "not yet" too. With `owner`, only that peer is asked (OwnersMeanwhile: one owner's objects),
    /// for as long as it is usable.
    func fromPeers(_ entries: [RouteEntry], _ how: PeerAsking, forms: inout PeerFormAsk?,
                   in fetch: ObjectFetch, report: inout SyncReport) throws(CenariusError) -> [RouteEntry] {
        let (waiting, owner, patient) = (how.waiting, how.owner, how.patient)
        // One owner's objects: one connection (OwnersMeanwhile runs two of these an owner).
        guard !entries.isEmpty, let downloader = try? Downloader(options: peerOptions(connections: owner == nil ? usablePeers.count : 0, asksOwner: owner != nil))
        else { return entries }
        var deadline = FileSystem.monotonic() + (waiting ? PeerSources.notYetWait : 0)
        var wanted = entries
        var left: [RouteEntry] = []
        var round = 0
        var later = false
        while !wanted.isEmpty, !isCancelled, round == 0 || FileSystem.monotonic() < deadline {
            let peers = usablePeers.filter { owner == nil || $0 == owner }
            guard !peers.isEmpty else { break }
            if later { usleep(UInt32(PeerSources.notYetRetry * 1e6)) }
            let asking = PeerRound(peers: peers, downloader: downloader, patient: waiting && patient?() == true, adoptLater: how.adoptLater)
            // The wait for "not yet" runs from the moment this device's own share is in, as it did
            // when the owners were asked only then.
            if asking.patient { deadline = FileSystem.monotonic() + PeerSources.notYetWait }
            let asked = try ask(wanted, of: asking, forms: &forms, in: fetch, report: &report)
            (wanted, later) = (asked.again, asked.later)
            left += asked.left
            round += 1
        }
        return left + wanted
    }

    /// The peers a round asks, and the downloader it asks them through.
    struct PeerRound {
        let peers: [String]
        let downloader: Downloader
        /// A `404` or a refused connection is "not yet": the peers may not have started.
        var patient = false
        var adoptLater: VerifiedFiles?
    }

    /// What a round of asking left: files to ask again (`later`: after a pause: busy peers turned
    /// them away; else files whose form a peer lacked, asked as their exact bytes), and files to
    /// leave for the origin (failed or missing).
    struct PeerRoundOutcome {
        var again: [RouteEntry] = []
        var later = false
        var left: [RouteEntry] = []

        /// Where a file a peer did not give goes: asked again (its exact bytes, after a form the
        /// owner lacks; later, after "busy"), or left for the origin, held against the peer when it failed.
        mutating func take(_ entry: RouteEntry, failedWith error: CenariusError, from peer: (url: String, askedForm: Bool, patient: Bool), in run: SyncRun) {
            let (askedForm, patient) = (peer.askedForm, peer.patient)
            if run.isCancelled {
                left.append(entry)
            } else if patient, error.isMissingRemoteFile || error.cause == .refused {
                // A peer started with this device may not be fetching yet, or not listening yet.
                again.append(entry)
                later = true
            } else if askedForm, error.isMissingRemoteFile {
                // The owner holds no such form (it took the file another way): its exact bytes, next round.
                again.append(entry)
            } else if error.retryAfter != nil, error.cause != .cutShort || run.settings.peers.health.forgives(brokenStreamOf: peer.url, now: FileSystem.monotonic()) {
                // Busy, or still fetching it (a stream of it broke off, once), not failing: asked
                // again, and not held against it.
                again.append(entry)
                later = true
            } else {
                left.append(entry)
                if error.code == .integrity {
                    run.settings.peers.health.record(.wrongBytes, peer: peer.url, now: FileSystem.monotonic())
                } else if !error.isMissingRemoteFile && error.cause != .refused {
                    // A refused connection costs nothing: a peer not listening yet (a device
                    // that started a moment later) or any more is asked again at the next sync.
                    run.settings.peers.health.record(.fault, peer: peer.url, now: FileSystem.monotonic())
                }
            }
        }
    }

    /// One round: each of `entries` asked of its owner among the round's peers, as its form when
    /// the owner kept one, else as its exact bytes; what arrived and checks out adopted.
    private func ask(_ entries: [RouteEntry], of round: PeerRound, forms: inout PeerFormAsk?, in fetch: ObjectFetch,
                       report: inout SyncReport) throws(CenariusError) -> PeerRoundOutcome {
        let chosen = entries.map { PeerChoice.owner(of: $0.hash.hex, among: round.peers) ?? round.peers[0] }
        let asked = entries.map { forms?.form($0) }
        let files = zip(entries, chosen).enumerated().map { index, pair in
            let (entry, peer) = pair
            if let form = asked[index] { return peerFormDownload(entry, path: form.path, peer: peer) }
            var file = FileDownload(url: peer + "/" + ReleaseIndex.plainPath(entry.hash), destination: fetch.objects.temporaryPath(entry.hash),
                                    expected: entry.hash, label: entry.uri.value, size: entry.size)
            file.source = peer
            return file
        }
        let results = round.downloader.download(files, cancel: cancel, progress: fetch.progress)
        var verified: [(temporary: String, hash: ContentHash)] = []
        var outcome = PeerRoundOutcome()
        for (index, result) in results.enumerated() {
            let (entry, peer) = (entries[index], chosen[index])
            switch result {
            case .success(let bytes):
                if let form = asked[index], let ask = forms {
                    switch decodePeerForm(files[index].destination, form: form, entry: entry, ask: ask, into: fetch.objects) {
                    case .success(let size):
                        verified.append((fetch.objects.temporaryPath(entry.hash), entry.hash))
                        report.countFromPeer(size: size, fetched: bytes)
                        if form.source.isPatch { report.patchedFiles += 1 } else { report.compressedFiles += 1 }
                    case .failure(let why):
                        // Decoding removed what it wrote; a form that does not give its file is a peer's wrong bytes.
                        outcome.left.append(entry)
                        if case .local = why {} else { settings.peers.health.record(.wrongBytes, peer: peer, now: FileSystem.monotonic()) }
                    }
                    continue
                }
                verified.append((files[index].destination, files[index].expected))
                report.countFromPeer(size: bytes, fetched: bytes)
            case .failure(let error):
                cache.tmp.remove(String(files[index].destination.dropFirst(layout.tmp.count + 1)))
                outcome.take(entry, failedWith: error, from: (peer, asked[index] != nil, round.patient), in: self)
                if asked[index] != nil, !isCancelled, !round.patient, error.isMissingRemoteFile { forms?.filesOnly.insert(entry.hash) }
            }
        }
        if !verified.isEmpty { effect(.downloads) }
        if let later = round.adoptLater { later.add(verified) } else { try fetch.objects.adoptAll(verified, in: cache) }
        return outcome
    }

    /// A peer is on the LAN: it connects in well under a second and sends fast, or the origin is
    /// the better source. One attempt (the origin is the retry), no `--header` (those are the
    /// origin's credentials), a few connections per peer (its own cap is `--peer-max-connections`).
    ///
    /// `connections`: as for asking that many peers (0: one connection). Each request names the
    /// release this sync fetches (`Cenarius-Release`, PeerSources.releaseHeader), so that a peer not
    /// yet fetching it learns that its peers are (docs/peers.md).
    func peerOptions(connections peers: Int, asksOwner: Bool = false) -> TransferOptions {
        var options = settings.transfer
        options.timeout = PeerSources.timeout
        options.lowSpeedBytes = PeerSources.lowSpeedBytes
        options.attempts = 1
        options.documentAttempts = 1
        options.headers = (settings.peers.fetching.current?.fetching.map { [PeerSources.releaseHeader + ": " + $0] } ?? [])
            + (asksOwner ? [PeerSources.ownerHeader + ": 1"] : [])
        options.headerHosts = Set(settings.peers.urls.compactMap { Remote.authority(of: $0) })
        options.sessions = nil
        (options.connections, options.hostConnections) = PeerSources.connections(asking: peers)
        options.loops = 1
        options.waitsForMultiplexing = false
        return options
    }
}

extension SyncReport {
    /// A file a peer gave: `size` bytes held, `fetched` bytes on the LAN (its form's, or its own).
    mutating func countFromPeer(size: Int64, fetched: Int64) {
        downloadedFiles += 1
        downloadedBytes += size
        bytesHeld += size
        bytesFetched += fetched
        bytesFromPeers += fetched
    }
}
