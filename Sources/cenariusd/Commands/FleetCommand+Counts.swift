import ArgumentParser
import Fleet
import RouteSync

extension FleetSQL.Engine: ExpressibleByArgument {}
extension FleetSQL.Format: ExpressibleByArgument {}

extension FleetCommand {
    /// `--counts FILE`: the warehouse counted (the `--sql` query's result); the same output and
    /// the same halt as from the logs, without their lines.
    func fromCounts(_ path: String) throws {
        let counts = try FleetCounts.parse(FileSystem.readFile(path, limit: 64 << 20), source: path)
        var summary = Summary(
            lines: 0, devices: counts.devices, malformed: 0, withoutReport: 0, droppedLines: 0,
            releases: counts.releases.map(Summary.Release.init),
            why: counts.why, notOnNewest: nil, counts: path)
        (summary.peerBytes, summary.originBytes) = (counts.bytes.peer, counts.bytes.origin)
        if let haltAbove, let remote {
            summary.halt = try rolloutHalt(remote).apply(HaltRule(percent: haltAbove, minDevices: minDevices), to: counts.releases)
        }
        if json { Output.json(summary) } else { print(summary) }
    }
}
