import ReportHeader
import RouteSync

/// The `Cenarius-Report` a poll carries: the device's state as the cache records it, read from the
/// files a poll reads anyway (the current generation's meta) or small ones beside them.
package enum DeviceReport {
    package static func header(settings: SyncSettings, currentMeta: GenerationMeta?, pending: Bool) -> String? {
        guard settings.report else { return nil }
        let layout = settings.cache
        let release = currentMeta?.release
            ?? (currentMeta == nil ? (try? FileSystem.readFile(settings.preset.tablePath)).map(FleetReport.releaseName(ofTable:)) : nil)
            ?? "none"
        let state: FleetReport.State
        if let current = currentMeta?.number, ReleaseStore(layout: layout).read().trial?.generation == current {
            state = .trial
        } else if !HoldStore(layout: layout).active().isEmpty {
            state = .held
        } else if pending {
            state = .deferred
        } else {
            state = .confirmed
        }
        let why = Why.answer(Why.Facts.read(settings, currentMeta: currentMeta, develop: false, asked: nil)).reason
        let report = FleetReport(device: FleetReport.deviceHash(settings.rollout.device(layout: layout).id), release: release, state: state,
                                 failed: FailedReleases(layout: layout).names, native: settings.rollout.nativeVersion?.description, why: why)
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
