/// A device's move from one release, state or failed list to another, as the tally took it in
/// (with `timeline: true`): 24 bytes, only when something counted changed, so a fleet's moves are a
/// few per device, not one per line.
struct Move: Sendable {
    var time: Double
    /// The device's word before (`new` for a device first seen) and after, as `DeviceRecord.word`.
    var from: UInt64
    var to: UInt64

    static let new = UInt64.max
    /// Release, failed list and state: what the counts are made of (not `why`).
    static let counted: UInt64 = (1 << 42) - 1
}

/// Per release, the devices on it and the devices that gave it up, at evenly spaced times from the
/// log's first report to its last: the adoption curve of a staged rollout (`fleet --html`).
package struct FleetTimeline: Sendable {
    package struct Series: Sendable {
        package var name: String
        package var on: [Int]
        package var failed: [Int]
    }

    /// Unix seconds of each point.
    package var times: [Double]
    /// Most devices that tried it first.
    package var releases: [Series]
}

extension FleetTally {
    /// nil without `timeline: true`, or before any report. Lines older than a device's report
    /// already taken in (a log read out of order) move nothing: the curve is the log's order's.
    package func timeline(points: Int = 60) -> FleetTimeline? {
        guard let moves, !moves.isEmpty else { return nil }
        // Not a stable sort, and need not be: two moves of one device at one time sum to the same counts.
        let sorted = moves.sorted { $0.time < $1.time }
        let start = sorted[0].time, end = sorted[sorted.count - 1].time
        var on: [Int: Int] = [:], failed: [Int: Int] = [:]
        var times: [Double] = []
        var snapshots: [(on: [Int: Int], failed: [Int: Int])] = []
        var next = 0
        for point in 0...max(1, points) {
            let time = start + (end - start) * Double(point) / Double(max(1, points))
            while next < sorted.count, sorted[next].time <= time {
                let move = sorted[next]
                if move.from != Move.new { add(move.from, -1, &on, &failed) }
                add(move.to, 1, &on, &failed)
                next += 1
            }
            times.append(time)
            snapshots.append((on, failed))
        }
        let series = releases().map { release in
            let id = nameID(release.name)
            return FleetTimeline.Series(name: release.name, on: snapshots.map { $0.on[id] ?? 0 }, failed: snapshots.map { $0.failed[id] ?? 0 })
        }
        return FleetTimeline(times: times, releases: series)
    }

    private func add(_ word: UInt64, _ sign: Int, _ on: inout [Int: Int], _ failed: inout [Int: Int]) {
        on[Int(word & 0xF_FFFF), default: 0] += sign
        for name in failedList(Int((word >> 20) & 0xF_FFFF)) { failed[Int(name), default: 0] += sign }
    }
}
