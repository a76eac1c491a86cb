package import ReportHeader

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
    /// Report lines of devices beyond `maxDevices`, not counted (anyone who reaches the origin can
    /// send reports, so a flood of forged device ids must not take the memory: docs/threats.md).
    package private(set) var droppedLines = 0
    package let maxDevices: Int
    /// Of `droppedLines`, those dropped for a release name past `maxNames`.
    package private(set) var droppedForNames = 0
    /// Distinct release names (and `failed` lists) kept: a fleet runs a few hundred releases,
    /// and one forged id could otherwise send millions of names.
    package static let maxNames = 65_536
    /// Each device's latest report, kept small: about 100 bytes a device with the table's slack,
    /// where whole reports took about 390 (a million forged ids: 164 MB peak, was 390 MB).
    private var latest: [DeviceKey: Latest] = [:]
    /// Release names and `failed` lists, each stored once however many devices name them.
    private var names = Interned<String>()
    private var failedLists = Interned<[Int32]>()
    /// Repeated polls of one device log the same header: parse each distinct value once.
    private var parsed: [String: FleetReport?] = [:]
    /// When each release was first reported as a device's: the newest is the last to appear.
    private var firstSeen: [Int32: Double] = [:]
    private let since: Double?

    /// A device id, as a 64-bit hash with this process's random seed: forged ids cannot be made
    /// to collide with a real one, and a million ids collide by chance with odds of about 1 in 10⁷.
    private struct DeviceKey: Hashable {
        let value: Int
        init(_ device: String) { value = device.hashValue }
    }

    private struct Latest {
        var time: Double
        var release: Int32
        var failed: Int32
        var state: FleetReport.State
        var why: WhyReason?
    }

    /// - Parameter maxDevices: devices counted at most; reports of any more are dropped and counted.
    package init(since: Double? = nil, maxDevices: Int = FleetTally.defaultMaxDevices) {
        self.since = since
        self.maxDevices = max(1, maxDevices)
    }

    package static let defaultMaxDevices = 2_000_000

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
        let key = DeviceKey(report.device)
        if let previous = latest[key] {
            if previous.time > time { return }
        } else if latest.count >= maxDevices {
            droppedLines += 1
            return
        }
        // Names are bounded like devices: one forged id can send a million release names too.
        var failed: [Int32] = []
        for name in Set(report.failed).subtracting([report.release]) {
            guard let id = names.id(name, limit: Self.maxNames) else { return dropForNames() }
            failed.append(id)
        }
        guard let release = names.id(report.release, limit: Self.maxNames), let list = failedLists.id(failed.sorted(), limit: Self.maxNames) else {
            return dropForNames()
        }
        latest[key] = Latest(time: time, release: release, failed: list, state: report.state, why: report.why)
        firstSeen[release] = min(firstSeen[release] ?? time, time)
    }

    private mutating func dropForNames() {
        droppedLines += 1
        droppedForNames += 1
    }

    /// Per release, most devices first.
    package func releases() -> [Release] {
        var byName: [Int32: Release] = [:]
        for entry in latest.values {
            var release = byName[entry.release] ?? Release(name: names[entry.release])
            switch entry.state {
            case .confirmed: release.confirmed += 1
            case .trial: release.trial += 1
            case .deferred: release.deferred += 1
            case .held: release.held += 1
            }
            byName[entry.release] = release
            for name in failedLists[entry.failed] {
                byName[name, default: Release(name: names[name])].failed += 1
            }
        }
        return byName.values.sorted { ($0.tried, $0.name) > ($1.tried, $1.name) }
    }

    /// The devices not on the newest release (the last to appear as a device's), per `why` code:
    /// "3 devices not on 2026.11-b: 3 held-back". nil when the log names no release.
    package func notOnNewest() -> (release: String, devices: Int, why: [String: Int])? {
        guard let newest = firstSeen.max(by: { ($0.value, $0.key) < ($1.value, $1.key) })?.key else { return nil }
        var devices = 0
        var counts: [String: Int] = [:]
        for entry in latest.values where entry.release != newest {
            devices += 1
            if let why = entry.why { counts[why.rawValue, default: 0] += 1 }
        }
        return (names[newest], devices, counts)
    }

    /// Devices per `why` code (docs/why.md), by each device's latest report; devices whose
    /// reports carry none (older versions) are not counted here.
    package func whyCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in latest.values { if let why = entry.why { counts[why.rawValue, default: 0] += 1 } }
        return counts
    }
}

/// Values numbered in the order first seen, each stored once.
struct Interned<Value: Hashable & Sendable>: Sendable {
    private var ids: [Value: Int32] = [:]
    private var values: [Value] = []

    /// nil when `value` is new and `limit` values are held already.
    mutating func id(_ value: Value, limit: Int) -> Int32? {
        if let id = ids[value] { return id }
        guard values.count < limit else { return nil }
        let id = Int32(values.count)
        values.append(value)
        ids[value] = id
        return id
    }

    subscript(id: Int32) -> Value { values[Int(id)] }
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
