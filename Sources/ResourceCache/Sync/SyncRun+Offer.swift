import Tracing
import ReportHeader
import RouteSync
import Transport

/// What the remote offers, checked: the first of a sync's three steps (offer, stage, switch).
/// The table was had from the head (when this device polls one) or the table itself, fetched
/// conditionally (or is the release still pending), parsed, is neither held back nor the table in
/// force, its manifest and signature were verified, and this device's moment in the rollout has
/// come. Nothing in the cache has changed but the records of a poll.
struct Offer {
    let remote: Remote
    /// The remote as the cache records it: without credentials (G11).
    let remoteName: String
    let current: Generation?
    let currentMeta: GenerationMeta?
    let bytes: [UInt8]
    let table: RouteTable
    let validators: Validators
    /// The release index that came with the table (a compressed table's second frame, or the
    /// head's), if it came that way.
    let embeddedIndex: [UInt8]?
    let manifest: FetchedManifest?
    let signed: TableSignatureVerifier.Verified?
    let admission: RolloutAdmission
    /// The version of the head it came from, if it came from one: recorded with the generation,
    /// the floor an offline bundle is held to even unsigned (docs/bundles.md).
    let headVersion: Int64?
}

extension SyncRun {
    enum OfferStep {
        /// The sync ends here: not modified, unchanged, held back or deferred.
        case ended(SyncReport)
        case offered(Offer)
    }

    /// What the device holds and asks with, read once per offer.
    struct Poll {
        let remote: Remote
        let remoteName: String
        let current: Generation?
        let currentMeta: GenerationMeta?
        /// A release this device has not adopted yet (waiting for its moment or a hold).
        let pending: (record: PendingRelease, table: [UInt8], manifest: [UInt8]?)?
        /// The device's report (Cenarius-Report), sent with the poll.
        let headers: [String]
        /// The report's short form for the head poll's query string, on the first poll of its window.
        let reportQuery: String?
        let started: Double

        /// The table in force and its SHA-256 (as recorded, else hashed), read only when asked for.
        func tableInForce() -> (bytes: [UInt8], digest: String)? {
            current.flatMap { try? FileSystem.readFile($0.tablePath) }.map { (bytes: $0, digest: currentMeta?.tableSHA256 ?? ReleaseIndex.tableDigest($0)) }
        }

        func ended(_ outcome: SyncReport.Outcome, generation: Int?, entries: Int, _ syncer: Syncer) -> SyncReport {
            syncer.markChecked()
            var report = SyncReport(outcome: outcome, generation: generation)
            report.entries = entries
            report.seconds = FileSystem.monotonic() - started
            return report
        }
    }

    /// Where an offered table came from, which says how its manifest and signature are had.
    enum TableSource {
        /// The table itself (or its compressed form, which may bring the index along).
        case table(embeddedIndex: [UInt8]?)
        /// A head: the manifest and the signature are in it, the signature checked already
        /// (`verified`, nil without keys).
        case head(ReleaseHead, index: [UInt8]?, verified: TableSignatureVerifier.Verified?)
    }

    mutating func offer() throws(CenariusError) -> OfferStep {
        let current = GenerationStore(layout: layout).current()
        let currentMeta = try? current?.meta()
        // A channel's releases are not the table's: recorded under the head's name.
        let remoteName = Secrets.redact(remote.releaseSource)
        let pending = PendingStore(layout: layout).read().flatMap { $0.record.remote == remoteName ? $0 : nil }
        let report = DeviceReport.report(settings: settings, currentMeta: currentMeta, pending: pending != nil)
        let reportHeader = report?.headerValue()
        let poll = Poll(remote: remote, remoteName: remoteName, current: current, currentMeta: currentMeta, pending: pending,
                        headers: reportHeader.map { ["\(FleetReport.headerName): \($0)"] } ?? [],
                        reportQuery: DeviceReport.queryItem(report, settings: settings, remote: remote), started: started)
        // A release this device has not adopted yet is asked for with its own validators, so a
        // poll while it waits costs a 304, not the table (G4, G10).
        let validators = pending?.record.tableValidators ?? (currentMeta?.remote == remoteName ? currentMeta?.validators : nil)
        // The head, once a release index said this remote publishes one (a first install gets
        // the table, its index and a pack in as few requests through the compressed table).
        if remote.headOnly {
            let state = heads.read(for: remote).flatMap { $0.absent ? nil : $0 } ?? HeadState(url: HeadState.urlDigest(remote))
            guard let step = try offerFromHead(poll, state: state) else {
                throw .remote("\(remote.headURL) gave no release of channel \(remote.channel)")
            }
            return step
        }
        // A device that has not asked this remote yet asks for its head first: where the remote
        // publishes one it is the release's commit point (`publish` writes the Cenarius layout
        // before it), so a first install never takes a release whose publish has not finished.
        // A remote without one answers 404 once, and is not asked again until an index names a head.
        let head = heads.read(for: remote) ?? HeadState(url: HeadState.urlDigest(remote))
        if !head.absent, let step = try offerFromHead(poll, state: head) {
            return step
        }
        let (document, embeddedIndex) = try Traced.span("cenarius.table") { _ throws(CenariusError) in
            try fetchTable(validators: validators, headers: poll.headers)
        }
        effect(.lastPoll)
        LastPoll.record(downloader.lastDocument, layout: layout)
        switch document {
        case .content(let body, let received):
            return try checked(poll, bytes: body, validators: received, source: .table(embeddedIndex: embeddedIndex))
        case .notModified:
            guard let pending else {
                if let current, let currentMeta { refreshSignature(of: current, meta: currentMeta) }
                return .ended(poll.ended(.notModified, generation: current?.number, entries: currentMeta?.entries ?? 0, syncer))
            }
            return try checked(poll, bytes: pending.table, validators: pending.record.tableValidators, source: .table(embeddedIndex: nil))
        }
    }

    /// The table in force offered again, maybe from a server without validators: no file work
    /// (G4), but the new validators remembered. It was verified when it was adopted.
    private func unchanged(_ poll: Poll, inForce: (Generation, GenerationMeta), table: RouteTable, validators: Validators,
                           source: TableSource) throws(CenariusError) -> SyncReport {
        let current = inForce.0
        var meta = inForce.1
        if meta.validators != validators || meta.remote != poll.remoteName || meta.entries != table.count {
            meta.validators = validators
            meta.remote = poll.remoteName
            meta.entries = table.count
            try gate.record(meta, of: current)
        }
        syncer.clearPending()
        switch source {
        case .table: refreshSignature(of: current, meta: meta)
        case .head(_, _, let verified): if let verified { try gate.keep(verified, for: current, meta: meta) }
        }
        return poll.ended(.unchanged, generation: current.number, entries: table.count, syncer)
    }

    /// The checks every offered table goes through, wherever it came from.
    func checked(_ poll: Poll, bytes: [UInt8], validators newValidators: Validators, source: TableSource) throws(CenariusError) -> OfferStep {
        let (remote, current, currentMeta) = (poll.remote, poll.current, poll.currentMeta)
        let table: RouteTable
        do throws(CenariusError) { table = try RouteTable.parse(bytes, source: remote.tableURL) } catch { throw syncer.refused(bytes, manifest: nil, error, attempt: attempt) }
        if gate.holdsBack(table: ReleaseIndex.tableDigest(bytes)) {
            return .ended(poll.ended(.heldBack, generation: current?.number, entries: table.count, syncer))
        }
        if let current, let currentBytes = try? FileSystem.readFile(current.tablePath), currentBytes == bytes, let meta = currentMeta {
            return .ended(try unchanged(poll, inForce: (current, meta), table: table, validators: newValidators, source: source))
        }
        var manifest: FetchedManifest?
        let signed: TableSignatureVerifier.Verified?
        let embeddedIndex: [UInt8]?
        do throws(CenariusError) {
            switch source {
            case .table(let index):
                embeddedIndex = index
                manifest = try fetchManifest(pending: poll.pending?.table == bytes ? poll.pending : nil)
                signed = try acceptSidecar(table: bytes, manifest: manifest?.bytes, inForce: currentMeta?.signedVersion)
            case .head(let head, let index, let verified):
                embeddedIndex = index
                manifest = try head.release.map { bytes throws(CenariusError) in
                    FetchedManifest(bytes: bytes, validators: Validators(), manifest: try ReleaseManifest.parse(bytes, source: remote.headURL))
                }
                signed = verified
            }
            if let version = signed?.version, let inForce = currentMeta?.signedVersion, version == inForce {
                throw CenariusError.integrity("\(remote.tableURL) reuses signed version \(version) for a different table (rollback refused)")
            }
        } catch {
            throw syncer.refused(bytes, manifest: manifest?.manifest, error, attempt: attempt)
        }
        let admission = RolloutAdmission(settings: settings, layout: layout, remote: remote, table: bytes, tableValidators: newValidators,
                                         manifest: manifest, previous: poll.pending?.record)
        if let deferral = try admission.deferral() {
            var report = poll.ended(.deferred, generation: current?.number, entries: table.count, syncer)
            report.deferred = deferral
            return .ended(report)
        }
        // The install policy's first decision: whether to download now (a window, a metered link).
        if !settings.install.isDefault, syncer.hasSomethingToServe(current), let wait = settings.install.download(now: settings.rollout.now(), bytes: syncer.missingBytes(table)) {
            var report = poll.ended(.deferred, generation: current?.number, entries: table.count, syncer)
            report.deferred = try admission.waiting(wait)
            return .ended(report)
        }
        return .offered(Offer(remote: remote, remoteName: poll.remoteName, current: current, currentMeta: currentMeta, bytes: bytes, table: table,
                              validators: newValidators, embeddedIndex: embeddedIndex, manifest: manifest, signed: signed, admission: admission,
                              headVersion: { if case .head(let head, _, _) = source { head.version } else { nil } }()))
    }
}

extension Syncer {
    /// A device with no release and no preset serves nothing until it installs one: the install
    /// policies, which choose the moment of an update, do not make it wait.
    func hasSomethingToServe(_ current: Generation?) -> Bool {
        current != nil || FileSystem.exists(settings.preset.tablePath)
    }

    /// What a release would download: its files the store and the preset do not hold (sizes as
    /// the table gives them; nil when one it lacks has no size). Nothing when it is already staged.
    func missingBytes(_ table: RouteTable) -> Int64? {
        let objects = ObjectStore(layout: layout)
        let preset = (try? settings.preset.table()) ?? .empty
        let presetHashes = Set(preset.entries.map(\.hash))
        var seen = Set<ContentHash>()
        var bytes: Int64 = 0
        for entry in table.entries where seen.insert(entry.hash).inserted && !presetHashes.contains(entry.hash) && !objects.contains(entry.hash) {
            guard let size = entry.size else { return nil }
            bytes += size
        }
        return bytes
    }
}
