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

extension Syncer {
    enum StageStep {
        /// Downloaded and verified, but a hold stops the switch: the files wait in the store.
        case held(SyncReport)
        case staged(Staged)
    }

    func stage(_ offer: Offer, mirrors: [Remote], cache: OpenedCache, downloader: Downloader, started: Double, formsAllowed: Bool,
               cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> StageStep {
        let (remote, table, bytes) = (offer.remote, offer.table, offer.bytes)
        let presetTable = (try? settings.preset.table()) ?? .empty
        let objects = ObjectStore(layout: layout)
        let plan = SyncPlan(
            table: table, preset: presetTable,
            presetHas: { settings.preset.folder.file($0) != nil },
            storeHas: { objects.contains($0) })
        var report = SyncReport(outcome: .committed, generation: nil)
        report.entries = table.count
        report.servedFromPreset = plan.fromPreset.count
        report.reusedObjects = Set(plan.cached.map(\.hash)).count - plan.downloads.count - plan.imports.count

        let recorder = plan.downloads.isEmpty ? nil : DownloadProgress.Recorder(
            layout: layout, release: offer.admission.release, files: plan.downloads.count, expectedBytes: plan.downloadBytes)
        defer { recorder?.end() }
        let progress = recorder.map { recorder in { (done: TransferProgress) in recorder.update(done); progress?(done) } } ?? progress
        let held = heldCopies(objects: objects, preset: presetTable)
        let forms = formPlan(plan.downloads, table: table, tableBytes: bytes, embeddedIndex: offer.embeddedIndex, remote: remote, downloader: downloader,
                             signed: offer.signed, held: held, learnsTableForm: formsAllowed, cancel: cancel)
        if !hasFreeSpace(needed: plan.downloadBytes) {
            // Objects kept from failed syncs are the first thing to give back when space is short;
            // the bases of the patches chosen are not (B8).
            let keep = Set(plan.cached.map(\.hash)).union(forms.bases)
            effect(.roomMade)
            GenerationStore(layout: layout).collectGarbage(keep: settings.keepGenerations, grace: settings.grace, sparing: keep)
        }
        try checkFreeSpace(needed: plan.downloadBytes)
        var imported: [(temporary: String, hash: ContentHash)] = []
        for item in plan.imports {
            guard let source = settings.preset.folder.file(item.source), let copy = try objects.importCopy(of: source, as: item.hash, in: cache) else {
                try objects.adoptAll(imported, in: cache)  // the copies verified so far are kept
                throw .integrity("preset file \(item.source) does not match its hash \(item.hash) in \(settings.preset.tablePath)")
            }
            imported.append((copy, item.hash))
        }
        if !imported.isEmpty { effect(.imports) }
        try objects.adoptAll(imported, in: cache)
        report.importedFromPreset += imported.count
        let plain = try downloadForms(plan.downloads, plan: forms, remote: remote, downloader: downloader, objects: objects, cache: cache,
                                      held: held, report: &report, cancel: cancel)
        try download(plain, stored: forms.storedPlain, remote: remote, mirrors: mirrors, with: downloader, into: objects, cache: cache, report: &report, cancel: cancel, progress: progress)
        if let holding = try offer.admission.holding() {
            return .held(waitingForHolds(holding, report: report, offer: offer, started: started))
        }
        // The install policy's second decision: whether to switch now (a window, an inhibit
        // file, --switch-at start). The release waits verified in the store, as for a hold.
        if hasSomethingToServe(offer.current), let wait = settings.install.switch(now: settings.rollout.now(), switching: switching) {
            return .held(waitingForHolds(try offer.admission.waiting(wait), report: report, offer: offer, started: started))
        }

        let number = (GenerationStore(layout: layout).all().first?.number ?? offer.current?.number ?? 0) + 1
        effect(.generationBuilt)
        let generation = try build(number: number, table: table, tableBytes: bytes, plan: plan, cache: cache, meta: GenerationMeta(
            number: number, remote: offer.remoteName, validators: offer.validators, committedAt: FileSystem.now(),
            cachedFiles: plan.cached.count, cachedBytes: 0, signedVersion: offer.signed?.version, entries: table.count,
            release: offer.admission.release, signedAt: offer.signed?.signedAt, signatureExpires: offer.signed?.expires,
            tableSHA256: ReleaseIndex.tableDigest(bytes), headVersion: offer.headVersion))
        return .staged(Staged(offer: offer, number: number, generation: generation, report: report))
    }

    /// Downloaded, verified and kept; the switch waits for the last hold to end (G10).
    func waitingForHolds(_ holding: SyncReport.Deferral, report: SyncReport, offer: Offer, started: Double) -> SyncReport {
        var report = report
        report.outcome = .held
        report.generation = offer.current?.number
        report.deferred = holding
        report.seconds = FileSystem.monotonic() - started
        markChecked()
        return report
    }
}
