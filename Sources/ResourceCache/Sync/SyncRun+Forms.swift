import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// A sync's use of the remote's compressed forms and patches (B8, docs/release-bytes.md): kept
/// apart from the sync itself, which only asks for the plan and hands over what is left.
extension Syncer {
    /// Where the device holds a verified copy of a hash: an object in the cache, else a preset file.
    func heldCopies(objects: ObjectStore, preset: RouteTable) -> @Sendable (ContentHash) -> String? {
        let inPreset = settings.preset.copies(listedIn: preset)
        return { hash in objects.contains(hash) ? objects.path(hash) : inPreset(hash) }
    }

    /// Whether this remote publishes a compressed table (`absent`: polls ask for the table itself,
    /// without a probe).
    func rememberTableForm(_ formURL: String, absent: Bool = false) {
        effect(.tableFormMarker)
        try? FileSystem.writeAtomically(Self.tableFormMarker(formURL, absent: absent), to: layout.tableForm, durable: false)
    }

    /// Nothing is known of this remote's compressed table: a refused or vanished one is asked for
    /// again only when a later release's index names it.
    func forgetTableForm() {
        effect(.tableFormMarker)
        unlink(layout.tableForm)
    }

    /// What `table-form` holds for a remote: a digest of the compressed table's URL, never the URL,
    /// which may carry a password (G5: secrets reach no file); `-` first when the remote has none.
    static func tableFormMarker(_ formURL: String, absent: Bool = false) -> [UInt8] {
        Array(((absent ? "-" : "") + ReleaseIndex.tableDigest(Array(formURL.utf8))).utf8)
    }

    /// The table the device holds, which a delta pack may start from: the generation in force,
    /// else the preset's (a device that ships with the last release).
    func heldTable() -> FormPlan.Held? {
        let path = GenerationStore(layout: layout).current()?.tablePath ?? settings.preset.tablePath
        return FormPlan.Held(tableAt: path)
    }
}

extension SyncRun {
    /// The table: its compressed form when this remote was seen publishing one (B8), which is one
    /// conditional request as polling the table is, and brings the release index as its second
    /// frame; else the table itself. A compressed table that cannot be had whole (gone, a 5xx, cut
    /// short, not decoding) costs one more request, for the table, in the same sync: a sync never
    /// fails because of a form while the table can be had.
    ///
    /// A device with no table from this remote yet (a first install) asks for the compressed
    /// table first: on a slow link it saves the round trips of a table larger than one window
    /// and of the index. A remote without one answers 404 once; that is remembered, and later
    /// polls ask for the table itself as they always did.
    mutating func fetchTable(validators: Validators?, headers: [String]) throws(CenariusError) -> (Document, index: [UInt8]?) {
        let formURL = remote.tableFormURL
        let marker = try? FileSystem.readFile(layout.tableForm, limit: 8192)
        let known = attempt.formsAllowed && marker == Syncer.tableFormMarker(formURL)
        let probing = attempt.formsAllowed && !known && validators == nil && marker != Syncer.tableFormMarker(formURL, absent: true) && Zstd.isAvailable
        guard known || probing else {
            // After a refused compressed table the validators may be its own: the table is asked for whole.
            return (try downloader.fetchDocument(remote.tableURL, validators: attempt.formsAllowed ? validators : nil, options: .init(headers: headers), cancel: cancel), nil)
        }
        do {
            switch try downloader.fetchDocument(formURL, validators: known ? validators : nil, options: .init(headers: headers, encoded: false), cancel: cancel) {
            case .notModified:
                return (.notModified, nil)
            case .content(let body, let received):
                if let frames = try? Zstd.decompressFrames(body, limit: 64 << 20), let table = frames.first, frames.count <= 2 {
                    if probing { syncer.rememberTableForm(formURL) }
                    attempt.tableFromForm = true
                    return (.content(table, received), frames.count == 2 ? frames[1] : nil)
                }
            }
        } catch {
            // What the table itself would meet too (no connection, a proxy's 407, a 429) fails the
            // sync as it would for the table, without a second request through it.
            guard error.isThisFile, !isCancelled else { throw error }
            // A probe takes the origin's "no such file" for "not here", and remembers it: a remote
            // that never published the form may refuse it rather than miss it (a private bucket
            // answers 403). Not a proxy's 407 or a 429, nor a 5xx: those say nothing about the file.
            var refused = error.isMissingRemoteFile
            if probing, case .httpStatus(let status)? = error.cause { refused = refused || [403, 404, 410].contains(status) }
            if probing && refused { syncer.rememberTableForm(formURL, absent: true) }
        }
        if known { syncer.forgetTableForm() }
        // The validators were the compressed form's; the table is asked for unconditionally.
        return (try downloader.fetchDocument(remote.tableURL, validators: nil, options: .init(headers: headers), cancel: cancel), nil)
    }

    /// The forms plan of a sync's downloads: plain files only when there is nothing to download
    /// or the remote publishes no index the device may use (one request, only for a new table).
    func formPlan(_ downloads: [RouteEntry], in fetch: ObjectFetch) -> FormPlan {
        let heldTable = downloads.isEmpty ? nil : syncer.heldTable()
        let listing = settings.storeListing
        let held = fetch.held
        return FormPlan(downloads: downloads, table: fetch.offer.table, index: downloads.isEmpty ? nil : fetch.index, holding: .init(heldTable) { held($0) != nil },
                        scope: .init(available: listing.map { listing in { listing.contains($0) } }, share: !settings.peers.urls.isEmpty))
    }

    /// The release index of a sync with downloads, which says the remote's forms (one request,
    /// only for a new table), and what it says of the remote for later polls.
    func formIndex(_ downloads: [RouteEntry], offer: Offer) -> ReleaseIndex? {
        let index = downloads.isEmpty || !Zstd.isAvailable ? nil : releaseIndex(table: offer.bytes, embedded: offer.embeddedIndex, signed: offer.signed)
        // Not in a sync whose compressed table was refused: that form stays forgotten until a later release's index names it.
        // The remote publishes a head: it is polled from the next sync on (docs/remote-layout.md).
        if let index, index.head { heads.learn(remote) }
        if let index, attempt.formsAllowed {
            let formURL = remote.tableFormURL
            syncer.rememberTableForm(formURL, absent: !index.tableForm)
        }
        return index
    }

    /// The release index that came with the table, else the one under its hash, through the gate.
    private func releaseIndex(table: [UInt8], embedded: [UInt8]?, signed: TableSignatureVerifier.Verified?) -> ReleaseIndex? {
        if let embedded, let index = gate.accept(index: embedded, table: table, signed: signed) { return index }
        return ReleaseIndexLoader.fetch(table: table, remote: remote, downloader: downloader, cancel: cancel)
            .flatMap { gate.accept(index: $0, table: table, signed: signed) }
    }

    /// Gets what it can of `entries` through their forms into the object store; returns the
    /// entries left for plain download.
    func downloadForms(_ entries: [RouteEntry], plan: FormPlan, in fetch: ObjectFetch, report: inout SyncReport) throws(CenariusError) -> [RouteEntry] {
        let objects = fetch.objects
        let products = entries.map { entry in
            FormFetcher.Product(hash: entry.hash, size: entry.size, label: entry.uri.value, destination: objects.temporaryPath(entry.hash))
        }
        // No form to fetch: the files go plain, but for an owner's files the store holds, which its
        // peers take as they arrive (FormProgress.plainOnly).
        guard plan.sources.values.contains(where: { $0.first != .plain }) || settings.peers.me != nil && !plan.storedPlain.isEmpty else { return entries }
        var fetcher = FormFetcher(remote: remote, downloader: downloader, options: settings.transfer, temporary: layout.tmp, basePath: fetch.held)
        if settings.peers.me != nil {
            fetcher.keep = PeerForms(layout: layout)
            fetcher.growing = settings.peers.fetching
            fetcher.formBytes = fetch.formBytes
        }
        let outcome = fetcher.fetch(products, plan: plan, cancel: cancel)
        if !outcome.done.isEmpty { effect(.downloads) }
        try objects.adoptAll(outcome.done.sorted().map { (products[$0].destination, products[$0].hash) }, in: cache)
        report.downloadedFiles += outcome.done.count
        report.downloadedBytes += outcome.bytesHeld
        report.bytesFetched += outcome.bytesFetched
        report.bytesHeld += outcome.bytesHeld
        report.patchedFiles += outcome.patched
        report.compressedFiles += outcome.compressed
        report.formFallbacks += outcome.fallbacks.count
        return entries.indices.filter { !outcome.done.contains($0) }.map { entries[$0] }
    }
}

/// How a sync got its table from one remote, for what happens when it fails.
struct TableAttempt {
    /// Whether the compressed table may be asked for (not after it gave a table that was refused).
    var formsAllowed = true
    /// The table came from the compressed table.
    var tableFromForm = false
    /// Past the table, signature and rollout checks: a failure from here on is not the table's.
    var pastTable = false
}

extension FormPlan.Held {
    /// The table at `path`, if there is a valid one.
    init?(tableAt path: String) {
        guard let bytes = try? FileSystem.readFile(path, limit: 64 << 20), let table = try? RouteTable.parse(bytes, source: path) else { return nil }
        self.init(digest: ReleaseIndex.tableDigest(bytes), hashes: Set(table.entries.map(\.hash)))
    }
}
