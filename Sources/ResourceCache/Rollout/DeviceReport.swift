import ReportHeader
import RouteSync

/// The `Cenarius-Report` a poll carries: the device's state as the cache records it, read from the
/// files a poll reads anyway (the current generation's meta) or small ones beside them.
package enum DeviceReport {
    package static func header(settings: SyncSettings, currentMeta: GenerationMeta?, pending: Bool) -> String? {
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
        return report.headerValue()
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
