import ReportHeader
import RouteSync

/// The `Cenarius-Report` a poll carries: the device's state as the cache records it, read from the
/// files a poll reads anyway (the current generation's meta) or small ones beside them.
package enum DeviceReport {
    package static func header(settings: SyncSettings, currentMeta: GenerationMeta?, pending: Bool) -> String? {
        report(settings: settings, currentMeta: currentMeta, pending: pending)?.headerValue()
    }

    /// The device's report; nil with `--no-report`.
    static func report(settings: SyncSettings, currentMeta: GenerationMeta?, pending: Bool) -> FleetReport? {
        guard settings.report else { return nil }
        let layout = settings.cache
        // One read of the small records serves both the state and the `why` code.
        let facts = Why.Facts.read(settings, currentMeta: currentMeta, develop: false, asked: nil)
        let state: FleetReport.State
        if facts.trialDeadline != nil {
            state = .trial
        } else if !facts.holds.isEmpty {
            state = .held
        } else if pending {
            state = .deferred
        } else {
            state = .confirmed
        }
        var report = FleetReport(device: FleetReport.deviceHash(settings.rollout.device(layout: layout).id), release: facts.currentRelease ?? "none",
                                 state: state, failed: FailedReleases(layout: layout).names, native: settings.rollout.nativeVersion?.description,
                                 why: Why.answer(facts).reason)
        report.peerBytes = currentMeta?.bytesFromPeers
        report.originBytes = currentMeta?.bytesFromOrigin
        return report
    }

    /// The short form for the head poll's query string (`--report-in query`), when this poll is the
    /// first of its window (docs/fleet.md): nil otherwise, and with `--report-in header`.
    static func queryItem(_ report: FleetReport?, settings: SyncSettings, remote: Remote) -> String? {
        // A file:// remote has no log, and its path no query string.
        guard settings.reportInQuery, let report, !remote.base.lowercased().hasPrefix("file:") else { return nil }
        let last = (try? FileSystem.readFile(settings.cache.reportQuery, limit: 64)).flatMap { Double(String(decoding: $0, as: UTF8.self)) }
        let now = settings.rollout.now()
        // A clock set back (or a record from the future) starts a window now rather than never.
        if let last, last <= now, now - last < FleetReport.queryWindow { return nil }
        return report.queryItem()
    }

    /// The poll that carried it reached the origin (or its CDN, which logged it): the window starts.
    static func sentQuery(settings: SyncSettings) {
        try? FileSystem.writeAtomically(Array(String(settings.rollout.now()).utf8), to: settings.cache.reportQuery)
    }
}

/// The releases this device rolled back or refused lately, newest first, a few at most: what the
/// fleet's reports count as "gave it up" (kept in the release state).
package struct FailedReleases: Sendable {
    let layout: CacheLayout

    package init(layout: CacheLayout) { self.layout = layout }

    package var names: [String] {
        Array(ReleaseStore(layout: layout).read().failedReleases.prefix(FleetReport.maxFailed))
    }

    /// Best effort: a report is information, never a reason for a sync or a rollback to fail.
    package func record(_ name: String) {
        _ = try? ReleaseStore(layout: layout).update { $0.recordFailedRelease(name) }
    }
}
