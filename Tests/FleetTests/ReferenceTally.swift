import Fleet
import ReportHeader

/// The tally as it was before lines were read in parallel (main at d68d2ed): every line through
/// `AccessLog.parseLine` and the structured-headers library, a dictionary of devices. The fast
/// reading must give exactly its counts.
struct ReferenceTally {
    struct Latest {
        var time: Double
        var release: String
        var failed: [String]
        var state: FleetReport.State
        var why: WhyReason?
    }

    var lines = 0, malformed = 0, withoutReport = 0, beforeSince = 0, droppedLines = 0
    var latest: [String: Latest] = [:]
    var order: [String] = []
    var firstSeen: [String: Double] = [:]
    /// Names in the order first counted (the old tally's numbering, which broke ties in notOnNewest).
    var nameOrder: [String: Int] = [:]
    let since: Double?
    let maxDevices: Int

    init(since: Double? = nil, maxDevices: Int = 1 << 30) {
        self.since = since
        self.maxDevices = maxDevices
    }

    mutating func add(line: ArraySlice<UInt8>) {
        lines += 1
        guard let (time, header) = AccessLog.parseLine(line) else { malformed += 1; return }
        if header.isEmpty || header == "-" { withoutReport += 1; return }
        if let since, time < since { beforeSince += 1; return }
        guard let report = FleetReport(headerValue: Array(header.utf8)) else { malformed += 1; return }
        if let previous = latest[report.device] {
            if previous.time > time { return }
        } else if latest.count >= maxDevices {
            droppedLines += 1
            return
        }
        var failed: [String] = []
        for name in report.failed where name != report.release && !failed.contains(name) { failed.append(name) }
        for name in failed + [report.release] where nameOrder[name] == nil { nameOrder[name] = nameOrder.count }
        if latest[report.device] == nil { order.append(report.device) }
        latest[report.device] = Latest(time: time, release: report.release, failed: failed, state: report.state, why: report.why)
        firstSeen[report.release] = min(firstSeen[report.release] ?? time, time)
    }

    func releases() -> [FleetTally.Release] {
        var byName: [String: FleetTally.Release] = [:]
        for entry in latest.values {
            var release = byName[entry.release] ?? .init(name: entry.release)
            switch entry.state {
            case .confirmed: release.confirmed += 1
            case .trial: release.trial += 1
            case .deferred: release.deferred += 1
            case .held: release.held += 1
            }
            byName[entry.release] = release
            for name in entry.failed { byName[name, default: .init(name: name)].failed += 1 }
        }
        return byName.values.sorted { ($0.tried, $0.name) > ($1.tried, $1.name) }
    }

    func whyCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in latest.values { if let why = entry.why { counts[why.rawValue, default: 0] += 1 } }
        return counts
    }

    func notOnNewest() -> (release: String, devices: Int, why: [String: Int])? {
        guard let newest = firstSeen.max(by: { ($0.value, nameOrder[$0.key]!) < ($1.value, nameOrder[$1.key]!) })?.key else { return nil }
        var devices = 0
        var counts: [String: Int] = [:]
        for entry in latest.values where entry.release != newest {
            devices += 1
            if let why = entry.why { counts[why.rawValue, default: 0] += 1 }
        }
        return (newest, devices, counts)
    }
}
