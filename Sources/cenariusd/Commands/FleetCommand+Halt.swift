import Fleet
import ReportHeader
import RouteSync

/// Halts the rollout of a remote folder's release (G10's `"halted": true`) when the fleet's reports
/// say so: the manifest is rewritten atomically and, for a signed remote, signed again with the table.
struct RolloutHalt {
    let remote: String
    let routesName: String
    let signKeys: [String]

    /// - Parameter releases: the fleet's counts, from its logs (`FleetTally`) or a warehouse (`FleetCounts`).
    func apply(_ rule: HaltRule, to releases: [FleetTally.Release]) throws(CenariusError) -> FleetCommand.Summary.Halt {
        let tablePath = FileSystem.join(remote, routesName)
        let manifestPath = tablePath + ".release"
        let table = try FileSystem.readFile(tablePath)
        let manifestBytes = try? FileSystem.readFile(manifestPath, limit: 64 << 10)
        var manifest = try manifestBytes.map { bytes throws(CenariusError) in try ReleaseManifest.parse(bytes, source: manifestPath) } ?? ReleaseManifest()
        // Devices report a release by its manifest's name, else by a short hash of its table.
        let name = manifest.release ?? FleetReport.releaseName(ofTable: table)
        let release = releases.first { $0.name == name }
        var halt = FleetCommand.Summary.Halt(release: name, tried: release?.tried ?? 0, failed: release?.failed ?? 0,
                                            failedPercent: 0, halted: false, reason: "")
        switch rule.verdict(for: release) {
        case .tooFewDevices(let tried):
            halt.reason = "not halted: \(name) was tried by \(tried) devices, fewer than --min-devices \(rule.minDevices)"
        case .keep(let share):
            halt.failedPercent = share
            halt.reason = "not halted: \(Self.percent(share)) of the \(halt.tried) devices that tried \(name) gave it up (limit \(Self.percent(rule.percent)))"
        case .halt(let share):
            halt.failedPercent = share
            if manifest.rollout?.halted == true {
                halt.halted = true
                halt.reason = "\(name) was already halted: \(Self.percent(share)) of \(halt.tried) devices gave it up"
                return halt
            }
            var rollout = manifest.rollout ?? .init(start: UnixTime(exactly: FileSystem.now().rounded(.down)) ?? 0, duration: .zero)
            rollout.halted = true
            manifest.rollout = rollout
            let written = manifest.serialized()
            let sidecar = tablePath + ".sig"
            // Checked by the command too; here again, right before the write it protects.
            try Self.checkKeys(signKeys, sidecar: sidecar)
            try FileSystem.writeAtomically(written, to: manifestPath)
            if !signKeys.isEmpty {
                try RoutesCommand.resign(table: table, manifest: written, sidecar: sidecar, keys: signKeys, root: remote)
            }
            // Devices that poll the head learn of the halt from it: a new head over the same table.
            let heads = HeadWriter(directory: remote, routesName: routesName)
            if heads.current != nil {
                _ = try heads.write(table: table, manifest: written, index: heads.currentIndex, tableForm: heads.currentTableForm, sidecar: signKeys.isEmpty ? nil : sidecar, keys: signKeys)
            }
            halt.halted = true
            halt.reason = "halted \(name): \(Self.percent(share)) of the \(halt.tried) devices that tried it rolled it back or refused it "
                + "(limit \(Self.percent(rule.percent))); wrote \(manifestPath)\(signKeys.isEmpty ? "" : " and re-signed \(tablePath).sig")"
        }
        return halt
    }

    /// Before anything is read or written: on a signed remote the keys given must be readable and
    /// include every key that signed the sidecar now in force, or the re-signed sidecar would be
    /// one devices refuse (a typo, one key of a threshold of two).
    static func checkKeys(_ keyPaths: [String], sidecar: String) throws(CenariusError) {
        guard FileSystem.exists(sidecar) else { return }
        guard !keyPaths.isEmpty else {
            throw .usage("\(sidecar) signs this remote: --halt-above needs --sign-key to sign the halted manifest (nothing was changed)")
        }
        let given = Set(try keyPaths.map { path throws(CenariusError) in TableSignature.keyID(of: try SigningKeys.readPrivate(path)) })
        let previous = try TableSignature.parse(FileSystem.readFile(sidecar, limit: 64 << 10), source: sidecar)
        let missing = Set(previous.signatures.map(\.keyID)).subtracting(given)
        guard missing.isEmpty else {
            throw .usage("\(sidecar) is signed by key \(missing.sorted().joined(separator: ", ")) too: give every --sign-key that signs this remote (nothing was changed)")
        }
    }

    static func percent(_ value: Double) -> String {
        let tenths = Whole.clamped(value * 10)
        return "\(tenths / 10).\(tenths % 10)%"
    }
}
