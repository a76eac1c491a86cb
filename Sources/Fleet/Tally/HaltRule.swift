/// Whether a rollout should stop: more than `percent` of the devices that tried the release gave it
/// up, out of at least `minDevices`.
package struct HaltRule: Sendable, Equatable {
    package var percent: Double
    package var minDevices: Int

    package init(percent: Double, minDevices: Int) {
        self.percent = percent
        self.minDevices = minDevices
    }

    package enum Verdict: Sendable, Equatable {
        case halt(failedPercent: Double)
        case keep(failedPercent: Double)
        case tooFewDevices(tried: Int)
    }

    package func verdict(for release: FleetTally.Release?) -> Verdict {
        guard let release, release.tried > 0, release.tried >= minDevices else { return .tooFewDevices(tried: release?.tried ?? 0) }
        let share = Double(release.failed) * 100 / Double(release.tried)
        return share > percent ? .halt(failedPercent: share) : .keep(failedPercent: share)
    }
}
