/// Each device's latest report, and from them what a publisher asks of a release: how many devices
/// run it and in which state, and how many rolled it back or refused it. Memory grows with the
/// devices, not with the lines.
package struct FleetTally: Sendable {
    package struct Release: Sendable, Equatable {
        package var name: String
        /// Devices whose release in force it is, by state.
        package var confirmed = 0, trial = 0, deferred = 0, held = 0
        /// Devices that rolled it back or refused it (it is in their `failed` list).
        package var failed = 0

        package init(name: String) { self.name = name }

        package var seen: Int { confirmed + trial + deferred + held }
        /// Devices that tried it: those that run it and those that gave it up.
        package var tried: Int { seen + failed }
    }

    package private(set) var lines = 0
    package private(set) var malformed = 0
    package private(set) var withoutReport = 0
    package private(set) var beforeSince = 0
    private var latest: [String: (time: Double, report: FleetReport)] = [:]
    /// Repeated polls of one device log the same header: parse each distinct value once.
    private var parsed: [String: FleetReport?] = [:]
    private let since: Double?

    package init(since: Double? = nil) { self.since = since }

    package var devices: Int { latest.count }

    /// One log line.
    package mutating func add(line: ArraySlice<UInt8>) {
        lines += 1
        guard let (time, header) = AccessLog.parseLine(line) else { malformed += 1; return }
        if header.isEmpty || header == "-" { withoutReport += 1; return }
        if let since, time < since { beforeSince += 1; return }
        let report: FleetReport?
        if let known = parsed[header] {
            report = known
        } else {
            report = FleetReport(headerValue: Array(header.utf8))
            if parsed.count >= 100_000 { parsed.removeAll(keepingCapacity: true) }
            parsed[header] = report
        }
        guard let report else { malformed += 1; return }
        add(report, at: time)
    }

    package mutating func add(_ report: FleetReport, at time: Double) {
        if let previous = latest[report.device], previous.time > time { return }
        latest[report.device] = (time, report)
    }

    /// Per release, most devices first.
    package func releases() -> [Release] {
        var byName: [String: Release] = [:]
        for (_, entry) in latest {
            let report = entry.report
            var release = byName[report.release] ?? Release(name: report.release)
            switch report.state {
            case .confirmed: release.confirmed += 1
            case .trial: release.trial += 1
            case .deferred: release.deferred += 1
            case .held: release.held += 1
            }
            byName[report.release] = release
            for name in Set(report.failed) where name != report.release {
                byName[name, default: Release(name: name)].failed += 1
            }
        }
        return byName.values.sorted { ($0.tried, $0.name) > ($1.tried, $1.name) }
    }
}

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
