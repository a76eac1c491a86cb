import ReportHeader
import RouteSync
import Transport

/// A release manifest as fetched: its exact bytes (the signature covers them), its validators
/// for the next conditional request, and what it says.
struct FetchedManifest {
    var bytes: [UInt8]
    var validators: Validators
    var manifest: ReleaseManifest
}

extension SyncRun {
    /// `<routes-name>.release`, asked for conditionally when the same release is still pending;
    /// nil when the remote has none (today's behaviour: adopt at once).
    func fetchManifest(pending: (record: PendingRelease, table: [UInt8], manifest: [UInt8]?)?) throws(CenariusError) -> FetchedManifest? {
        let known = pending.flatMap { pending in pending.manifest.map { ($0, pending.record.manifestValidators) } }
        let document: Document
        do {
            document = try downloader.fetchDocument(remote.manifestURL, validators: known?.1 ?? nil, maxBytes: 64 << 10, cancel: cancel)
        } catch {
            if error.isMissingRemoteFile { return nil }
            throw error
        }
        switch document {
        case .content(let bytes, let validators):
            return FetchedManifest(bytes: bytes, validators: validators, manifest: try ReleaseManifest.parse(bytes, source: remote.manifestURL))
        case .notModified:
            guard let known else { throw .remote("\(remote.manifestURL) answered 304 to an unconditional request") }
            return FetchedManifest(bytes: known.0, validators: known.1 ?? Validators(),
                                   manifest: try ReleaseManifest.parse(known.0, source: remote.manifestURL))
        }
    }
}

/// Whether a new table is switched to now (G10): its manifest's rollout and compatibility gate,
/// then the holds. What waits is written to `pending/`, so the next poll asks for it
/// conditionally and `status` says what it waits for.
struct RolloutAdmission {
    let settings: SyncSettings
    let layout: CacheLayout
    let remote: Remote
    let table: [UInt8]
    let tableValidators: Validators
    let manifest: FetchedManifest?
    let previous: PendingRelease?

    /// The one name of a release everywhere (events, status, the fleet's reports, held-back and
    /// failed records): the manifest's, else `FleetReport.releaseName` of the table.
    var release: String {
        manifest?.manifest.release ?? FleetReport.releaseName(ofTable: table)
    }

    /// nil: adopt now (no manifest, or this device's moment has come).
    func deferral() throws(CenariusError) -> SyncReport.Deferral? {
        guard let manifest else { return nil }
        let device = settings.rollout.device(layout: layout)
        let now = settings.rollout.now()
        let decision = RolloutGate.decide(manifest.manifest, release: release, device: device, now: now)
        let place = manifest.manifest.rollout.map { _ in RolloutGate.place(deviceID: device.id, release: release) }
        let deferral: SyncReport.Deferral
        switch decision {
        case .adopt:
            return nil
        case .wait(let until):
            deferral = .init(release: release, reason: decision.reason,
                             detail: "this device adopts at its place in the rollout", place: place, at: until)
        case .halted:
            deferral = .init(release: release, reason: decision.reason, detail: "the rollout is halted", place: place, at: nil)
        case .incompatible(let why):
            deferral = .init(release: release, reason: decision.reason, detail: why, place: place, at: nil)
        }
        try record(deferral, now: now)
        return deferral
    }

    /// nil: no hold is active, switch.
    func holding() throws(CenariusError) -> SyncReport.Deferral? {
        let holds = HoldStore(layout: layout).active()
        guard let last = holds.max(by: { $0.expires < $1.expires }) else { return nil }
        let reasons = holds.map(\.reason).filter { !$0.isEmpty }
        let deferral = SyncReport.Deferral(
            release: release, reason: "hold",
            detail: "\(holds.count) hold\(holds.count == 1 ? "" : "s") active\(reasons.isEmpty ? "" : " (" + reasons.joined(separator: ", ") + ")")",
            place: nil, at: last.expires)
        try record(deferral, now: settings.rollout.now())
        return deferral
    }

    /// The install policy makes the release wait: recorded as any deferral, so that a poll while it
    /// waits costs a 304 and `status`, `why` and the events say what it waits for.
    func waiting(_ wait: InstallPolicy.Wait) throws(CenariusError) -> SyncReport.Deferral {
        let deferral = SyncReport.Deferral(release: release, reason: wait.reason, detail: wait.detail, place: nil, at: wait.until)
        try record(deferral, now: settings.rollout.now())
        return deferral
    }

    private func record(_ deferral: SyncReport.Deferral, now: Double) throws(CenariusError) {
        let seenAt = previous?.release == release ? previous?.seenAt ?? now : now
        let record = PendingRelease(
            remote: Secrets.redact(remote.releaseSource), release: release, tableValidators: tableValidators, manifestValidators: manifest?.validators,
            reason: deferral.reason, detail: deferral.detail, place: deferral.place, moment: deferral.at, seenAt: seenAt, checkedAt: now)
        settings.effects?.before(.pending)
        try PendingStore(layout: layout).write(record, table: table, manifest: manifest?.bytes)
    }
}
