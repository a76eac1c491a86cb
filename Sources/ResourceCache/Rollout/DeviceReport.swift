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
        let report = FleetReport(device: FleetReport.deviceHash(settings.rollout.device(layout: layout).id), release: facts.currentRelease ?? "none",
                                 state: state, failed: FailedReleases(layout: layout).names, native: settings.rollout.nativeVersion?.description,
                                 why: Why.answer(facts).reason)
        return report.headerValue()
    }
}

/// The releases this device rolled back or refused lately, newest first, a few at most: what the
/// fleet's reports count as "gave it up".
package struct FailedReleases: Sendable {
    let layout: CacheLayout

    package init(layout: CacheLayout) { self.layout = layout }

    package var names: [String] {
        guard let bytes = try? FileSystem.readFile(layout.failedReleases, limit: 4096),
              case .array(let items)? = try? JSONValue.parse(bytes, source: layout.failedReleases) else { return [] }
        return items.compactMap(\.string).prefix(FleetReport.maxFailed).map { $0 }
    }

    /// Best effort: a report is information, never a reason for a sync or a rollback to fail.
    package func record(_ name: String) {
        var names = names
        guard names.first != name else { return }
        names.removeAll { $0 == name }
        names.insert(name, at: 0)
        let text = "[" + names.prefix(FleetReport.maxFailed).map(JSONText.quoted).joined(separator: ", ") + "]\n"
        try? FileSystem.writeAtomically(Array(text.utf8), to: layout.failedReleases)
    }
}
