import Tracing
import ReportHeader
import RouteSync
import Transport

/// An offered release staged: the second of a sync's three steps. Every file it names is
/// verified in the object store (imported from the preset, patched, decoded or downloaded) and a
/// generation is built from them beside the current one; nothing is current yet.
struct Staged {
    let offer: Offer
    let number: Int
    /// The generation's folder, built and durable, not yet linked as `current`.
    let generation: String
    var report: SyncReport
}

extension SyncRun {
    enum StageStep {
        /// Downloaded and verified, but a hold stops the switch: the files wait in the store.
        case held(SyncReport)
        case staged(Staged)
    }

    /// Every file of the offered release into the store (from the preset, its forms, or plain),
    /// then, unless a hold or the install policy stops it here, the generation built from them.
    func stage(_ offer: Offer) throws(CenariusError) -> StageStep {
        let presetTable = (try? settings.preset.table()) ?? .empty
        let objects = ObjectStore(layout: layout)
        let plan = SyncPlan(
            table: offer.table, preset: presetTable,
            presetHas: { settings.preset.folder.file($0) != nil },
            storeHas: { objects.contains($0) })
        var report = SyncReport(outcome: .committed, generation: nil)
        report.entries = offer.table.count
        report.servedFromPreset = plan.fromPreset.count
        report.reusedObjects = Set(plan.cached.map(\.hash)).count - plan.downloads.count - plan.imports.count
        try fetch(plan, of: offer, into: objects, preset: presetTable, report: &report)
        if let holding = try offer.admission.holding() {
            return .held(waitingForHolds(holding, report: report, offer: offer))
        }
        // The install policy's second decision: whether to switch now (a window, an inhibit
        // file, --switch-at start). The release waits verified in the store, as for a hold.
        if syncer.hasSomethingToServe(offer.current), let wait = settings.install.switch(now: settings.rollout.now(), switching: syncer.switching) {
            return .held(waitingForHolds(try offer.admission.waiting(wait), report: report, offer: offer))
        }
        let number = (GenerationStore(layout: layout).all().first?.number ?? offer.current?.number ?? 0) + 1
        effect(.generationBuilt)
        var meta = GenerationMeta(
            number: number, remote: offer.remoteName, validators: offer.validators, committedAt: FileSystem.now(),
            cachedFiles: plan.cached.count, cachedBytes: 0, signedVersion: offer.signed?.version, entries: offer.table.count,
            release: offer.admission.release, signedAt: offer.signed?.signedAt, signatureExpires: offer.signed?.expires,
            tableSHA256: ReleaseIndex.tableDigest(offer.bytes), headVersion: offer.headVersion)
        if report.bytesFromPeers > 0 { (meta.bytesFromPeers, meta.bytesFromOrigin) = (report.bytesFromPeers, report.bytesFromOrigin) }
        let generation = try build(number: number, table: offer.table, tableBytes: offer.bytes, plan: plan, meta: meta)
        return .staged(Staged(offer: offer, number: number, generation: generation, report: report))
    }

    /// The plan's downloads and imports, verified into the store, with room made first and the
    /// download's progress recorded for `status` and `why`.
    private func fetch(_ plan: SyncPlan, of offer: Offer, into objects: ObjectStore, preset: RouteTable, report: inout SyncReport) throws(CenariusError) {
        let recorder = plan.downloads.isEmpty ? nil : DownloadProgress.Recorder(
            layout: layout, release: offer.admission.release, files: plan.downloads.count, expectedBytes: plan.downloadBytes)
        defer { recorder?.end() }
        let progress = recorder.map { recorder in { (done: TransferProgress) in recorder.update(done); self.progress?(done) } } ?? self.progress
        let fetch = ObjectFetch(offer: offer, index: formIndex(plan.downloads, offer: offer), objects: objects,
                                held: syncer.heldCopies(objects: objects, preset: preset), progress: progress)
        let forms = formPlan(plan.downloads, in: fetch)
        if !syncer.hasFreeSpace(needed: plan.downloadBytes) {
            // Objects kept from failed syncs are the first thing to give back when space is short;
            // the bases of the patches chosen are not (B8).
            let keep = Set(plan.cached.map(\.hash)).union(forms.bases)
            effect(.roomMade)
            GenerationStore(layout: layout).collectGarbage(keep: settings.keepGenerations, grace: settings.grace, sparing: keep)
        }
        try syncer.checkFreeSpace(needed: plan.downloadBytes)
        report.importedFromPreset += try importFromPreset(plan.imports, into: objects)
        guard !settings.peers.urls.isEmpty else {
            return try fromOrigin(plan.downloads, forms: forms, in: fetch, report: &report)
        }
        // Peers: this device's share (asked once of a peer that may hold it already, else from the
        // origin, for the others too) while the rest is asked of their owners on another thread,
        // waiting for what they are still fetching (OwnersMeanwhile). When an owner failed (killed,
        // hostile), what it left is shared again over the peers left (three rounds at most); what no
        // peer gives is planned again from the origin's forms and packs.
        // Its own share's forms are kept for the others (PeerForms): those of this release's files only.
        if settings.peers.me != nil { PeerForms(layout: layout).prune(keeping: Set(offer.table.entries.map(\.hash))) }
        settings.peers.fetching.begin(plan.downloads.map(\.hash), release: ReleaseIndex.tableDigest(offer.bytes), holding: offer.currentMeta?.tableSHA256)
        defer { settings.peers.fetching.end() }
        var wanted = plan.downloads
        var asks = peerFormAsk(plan.downloads, in: fetch)
        var none: PeerFormAsk?
        for pass in 0..<3 where !wanted.isEmpty {
            let usable = usablePeers
            let shares = peerShares(wanted, in: fetch)
            let theirs = OwnersMeanwhile(self, entries: shares.theirs, owners: shares.owners, forms: asks, in: fetch)
            do throws(CenariusError) {
                let mine = pass == 0 ? try fromPeersTraced(shares.mine, .init(waiting: false), forms: &none, in: fetch, report: &report) : shares.mine
                try fromOrigin(mine, forms: formPlan(mine, in: fetch), in: fetch, report: &report)
            } catch {
                _ = try? theirs.finish(into: &report, forms: &asks)
                throw error
            }
            wanted = try theirs.finish(into: &report, forms: &asks)
            if usablePeers == usable { break }
        }
        let left = wanted.count == plan.downloads.count ? forms : formPlan(wanted, in: fetch)
        try fromOrigin(wanted, forms: left, in: fetch, report: &report)
    }

    /// `downloads` from the origin and its mirrors: the forms (patches, compressed files, packs),
    /// then the plain files.
    private func fromOrigin(_ downloads: [RouteEntry], forms: FormPlan, in fetch: ObjectFetch, report: inout SyncReport) throws(CenariusError) {
        defer { report.bytesFromOrigin = report.bytesFetched - report.bytesFromPeers }
        guard !downloads.isEmpty else { return }
        var (downloads, forms) = (downloads, forms)
        // A first install of a release that carries an earlier pack: that pack's files, then the delta pack.
        if let carried = forms.carried, let next = try carriedInstall(downloads, carried: carried, in: fetch, report: &report) {
            (downloads, forms) = next
        }
        // One span a source of bytes: the forms (patches, compressed files, packs) and the plain files.
        let plain = try Traced.span("cenarius.download.forms") { span throws(CenariusError) in
            let plain = try downloadForms(downloads, plan: forms, in: fetch, report: &report)
            report.traceBytes(span, files: downloads.count - plain.count)
            return plain
        }
        try Traced.span("cenarius.download.files") { span throws(CenariusError) in
            let before = report.bytesFetched
            try download(plain, stored: forms.storedPlain, into: fetch.objects, report: &report, progress: fetch.progress)
            span.attributes["cenarius.files"] = SpanAttribute.int64(Int64(plain.count))
            span.attributes["cenarius.bytes.fetched"] = SpanAttribute.int64(report.bytesFetched - before)
        }
    }

    /// Copies of preset files into the store, each verified against its hash; how many.
    private func importFromPreset(_ imports: [(hash: ContentHash, source: URIPath)], into objects: ObjectStore) throws(CenariusError) -> Int {
        var imported: [(temporary: String, hash: ContentHash)] = []
        for item in imports {
            guard let source = settings.preset.folder.file(item.source), let copy = try objects.importCopy(of: source, as: item.hash, in: cache) else {
                try objects.adoptAll(imported, in: cache)  // the copies verified so far are kept
                throw .integrity("preset file \(item.source) does not match its hash \(item.hash) in \(settings.preset.tablePath)")
            }
            imported.append((copy, item.hash))
        }
        if !imported.isEmpty { effect(.imports) }
        try objects.adoptAll(imported, in: cache)
        return imported.count
    }

    /// Downloaded, verified and kept; the switch waits for the last hold to end (G10).
    func waitingForHolds(_ holding: SyncReport.Deferral, report: SyncReport, offer: Offer) -> SyncReport {
        var report = report
        report.outcome = .held
        report.generation = offer.current?.number
        report.deferred = holding
        report.seconds = FileSystem.monotonic() - started
        syncer.markChecked()
        return report
    }
}
