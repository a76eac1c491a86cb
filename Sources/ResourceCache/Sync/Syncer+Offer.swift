import ReportHeader
import RouteSync

/// What the remote offers, checked: the first of a sync's three steps (offer, stage, switch).
/// The table was fetched conditionally (or is the release still pending), parsed, is neither held
/// back nor the table in force, its manifest and signature were verified, and this device's
/// moment in the rollout has come. Nothing in the cache has changed but the records of a poll.
struct Offer {
    let remote: Remote
    /// The remote as the cache records it: without credentials (G11).
    let remoteName: String
    let current: Generation?
    let currentMeta: GenerationMeta?
    let bytes: [UInt8]
    let table: RouteTable
    let validators: Validators
    /// The release index that came with a compressed table, if it came that way.
    let embeddedIndex: [UInt8]?
    let manifest: FetchedManifest?
    let signed: TableSignatureVerifier.Verified?
    let admission: RolloutAdmission
}

extension Syncer {
    enum OfferStep {
        /// The sync ends here: not modified, unchanged, held back or deferred.
        case ended(SyncReport)
        case offered(Offer)
    }

    func offer(from remote: Remote, downloader: Downloader, started: Double, attempt: inout TableAttempt,
               cancel: CancelToken?) throws(CenariusError) -> OfferStep {
        let current = GenerationStore(layout: layout).current()
        let currentMeta = try? current?.meta()
        // A release this device has not adopted yet is asked for with its own validators, so a
        // poll while it waits costs a 304, not the table (G4, G10).
        let remoteName = Secrets.redact(remote.tableURL)
        let pending = PendingStore(layout: layout).read().flatMap { $0.record.remote == remoteName ? $0 : nil }
        let validators = pending?.record.tableValidators ?? (currentMeta?.remote == remoteName ? currentMeta?.validators : nil)

        let reportHeader = DeviceReport.header(settings: settings, currentMeta: currentMeta, pending: pending != nil)
        let (document, embeddedIndex) = try fetchTable(remote, validators: validators, headers: reportHeader.map { ["\(FleetReport.headerName): \($0)"] } ?? [],
                                                       downloader: downloader, attempt: &attempt, cancel: cancel)
        let bytes: [UInt8]
        let newValidators: Validators
        switch document {
        case .content(let body, let received):
            bytes = body
            newValidators = received
        case .notModified:
            guard let pending else {
                if let current, let currentMeta { refreshSignature(of: current, meta: currentMeta, remote: remote, downloader: downloader, cancel: cancel) }
                markChecked()
                var report = SyncReport(outcome: .notModified, generation: current?.number)
                report.entries = currentMeta?.entries ?? 0
                report.seconds = FileSystem.monotonic() - started
                return .ended(report)
            }
            bytes = pending.table
            newValidators = pending.record.tableValidators
        }
        let table: RouteTable
        do throws(CenariusError) { table = try RouteTable.parse(bytes, source: remote.tableURL) } catch { throw refused(bytes, manifest: nil, error, attempt: attempt) }
        func ended(_ outcome: SyncReport.Outcome, generation: Int?) -> SyncReport {
            markChecked()
            var report = SyncReport(outcome: outcome, generation: generation)
            report.entries = table.count
            report.seconds = FileSystem.monotonic() - started
            return report
        }
        if let held = try? FileSystem.readFile(layout.heldBack), held == Array(Rollback.fingerprint(bytes).utf8) {
            return .ended(ended(.heldBack, generation: current?.number))
        }
        if let current, let currentBytes = try? FileSystem.readFile(current.tablePath), currentBytes == bytes, var meta = currentMeta {
            // Same table, maybe from a server without validators: no file work (G4), but remember
            // the new validators. It was verified when it was adopted.
            if meta.validators != newValidators || meta.remote != remoteName || meta.entries != table.count {
                meta.validators = newValidators
                meta.remote = remoteName
                meta.entries = table.count
                try FileSystem.writeAtomically(meta.encoded(), to: current.metaPath)
            }
            PendingStore(layout: layout).clear()
            refreshSignature(of: current, meta: meta, remote: remote, downloader: downloader, cancel: cancel)
            return .ended(ended(.unchanged, generation: current.number))
        }
        var manifest: FetchedManifest?
        let signed: TableSignatureVerifier.Verified?
        do throws(CenariusError) {
            manifest = try fetchManifest(remote, downloader: downloader, pending: pending?.table == bytes ? pending : nil, cancel: cancel)
            signed = try verifySignature(table: bytes, manifest: manifest?.bytes, remote: remote, downloader: downloader,
                                         inForce: currentMeta?.signedVersion, cancel: cancel)
            if let version = signed?.version, let inForce = currentMeta?.signedVersion, version == inForce {
                throw CenariusError.integrity("\(remote.tableURL) reuses signed version \(version) for a different table (rollback refused)")
            }
        } catch {
            throw refused(bytes, manifest: manifest?.manifest, error, attempt: attempt)
        }
        let admission = RolloutAdmission(settings: settings, layout: layout, remote: remote, table: bytes, tableValidators: newValidators,
                                         manifest: manifest, previous: pending?.record)
        if let deferral = try admission.deferral() {
            var report = ended(.deferred, generation: current?.number)
            report.deferred = deferral
            return .ended(report)
        }
        return .offered(Offer(remote: remote, remoteName: remoteName, current: current, currentMeta: currentMeta, bytes: bytes, table: table,
                              validators: newValidators, embeddedIndex: embeddedIndex, manifest: manifest, signed: signed, admission: admission))
    }
}
