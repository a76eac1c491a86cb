import ArgumentParser
import Fleet
import Publishing
import ReportHeader
import RouteSync

/// Halts the rollout of a remote folder's release (G10's `"halted": true`) when the fleet's reports
/// say so, through the one halt path (`Halting`): the channel's release republished halted, under
/// the publish lock, with its release record. A folder whose head names no release index (`routes`
/// without `--compress`, or written before heads) cannot be republished from a store: its manifest
/// is rewritten in place, signed again with the table when signed, and a new head written over it.
struct RolloutHalt {
    /// A folder, `file:///PATH` or `s3://BUCKET/PREFIX`.
    let remote: String
    let routesName: String
    let signKeys: [String]
    /// Opens `remote` with the command's store options (`--endpoint`, `--cacert`, …).
    let open: (String) throws(CenariusError) -> any Destination

    /// - Parameter releases: the fleet's counts, from its logs (`FleetTally`) or a warehouse (`FleetCounts`).
    func apply(_ rule: HaltRule, to releases: [FleetTally.Release]) throws -> FleetCommand.Summary.Halt {
        let destination = try open(remote)
        let state = try RemoteState.read(destination, channel: ReleaseHead.defaultChannel, routesName: routesName, records: 0)
        // A folder whose head names no index: the manifest beside its table, halted in place.
        var folder: String?
        if case .folder(let path) = try DestinationAddress(remote), state.head?.index == nil { folder = path }
        let manifest: ReleaseManifest
        if let head = state.head, folder == nil {
            manifest = try Halting.manifest(of: head, source: remote)
        } else if let folder {
            let manifestPath = FileSystem.join(folder, routesName) + ".release"
            let bytes = try? FileSystem.readFile(manifestPath, limit: 64 << 10)
            manifest = try bytes.map { bytes throws(CenariusError) in try ReleaseManifest.parse(bytes, source: manifestPath) } ?? ReleaseManifest()
        } else {
            throw CenariusError.notFound("\(remote) has no head of channel \(ReleaseHead.defaultChannel): nothing to halt")
        }
        // Devices report a release by its manifest's name, else by a short hash of its table.
        let name = try state.head.map { Halting.name(of: $0, manifest: manifest) }
            ?? manifest.release ?? FleetReport.releaseName(ofTable: FileSystem.readFile(FileSystem.join(folder ?? remote, routesName)))
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
            let why = "\(Self.percent(share)) of the \(halt.tried) devices that tried it rolled it back or refused it (limit \(Self.percent(rule.percent)))"
            if let folder {
                if manifest.rollout?.halted == true { return halt.already(share) }
                let wrote = try haltInPlace(manifest, folder: folder)
                halt.halted = true
                halt.reason = "halted \(name): \(why); \(wrote)"
                return halt
            }
            var options = try RepublishOptions.parse([])
            options.signKey = signKeys
            let halting = Halting(remote: destination, channel: ReleaseHead.defaultChannel, routesName: routesName, options: options)
            switch try halting.set(true, origin: "fleet --halt-above", quiet: true, release: name) {
            case .already:
                return halt.already(share)
            case .moved(let other):
                halt.reason = "not halted: \(name) is no longer the release of \(remote) (\(other) was published since)"
            case .republished(let summary):
                halt.halted = true
                halt.reason = "halted \(name): \(why); republished it halted as version \(summary.version)\(signKeys.isEmpty ? "" : ", re-signed")"
            }
        }
        return halt
    }

    /// A remote without a head: its manifest halted where it lies and, when signed, its sidecar signed anew.
    private func haltInPlace(_ manifest: ReleaseManifest, folder: String) throws(CenariusError) -> String {
        let tablePath = FileSystem.join(folder, routesName)
        let manifestPath = tablePath + ".release"
        let written = Halting.setting(true, in: manifest).serialized()
        let sidecar = tablePath + ".sig"
        // Checked by the command too; here again, right before the write it protects.
        try Self.checkKeys(signKeys, sidecar: sidecar)
        try FileSystem.writeAtomically(written, to: manifestPath)
        let table = try FileSystem.readFile(tablePath)
        var signature: TableSignature?
        if !signKeys.isEmpty {
            let legacyIndex = try? FileSystem.readFile(FileSystem.join(folder, ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(table))), limit: 32 << 20)
            let resigned = try ReleaseSigner(keys: signKeys).resign(table: table, manifest: written, previous: try? FileSystem.readFile(sidecar, limit: 64 << 10),
                                                                     legacyIndex: legacyIndex, source: sidecar)
            try FileSystem.writeAtomically(resigned.serialized(), to: sidecar)
            signature = resigned
        }
        // Devices that poll the head learn of the halt from it: a new head over the same table.
        let headPath = FileSystem.join(folder, ReleaseHead.name(routesName: routesName, channel: ReleaseHead.defaultChannel))
        if let bytes = try? FileSystem.readFile(headPath, limit: ReleaseHead.maxBytes), let current = try? ReleaseHead.parse(bytes, source: headPath) {
            var heads = HeadWriter(directory: folder, routesName: routesName, previous: current)
            heads.keys = signKeys
            _ = try heads.write(.init(table: table, manifest: written), signed: signature)
        }
        return "wrote \(manifestPath)\(signKeys.isEmpty ? "" : " and re-signed \(sidecar)")"
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

extension FleetCommand.Summary.Halt {
    fileprivate func already(_ share: Double) -> Self {
        var halt = self
        halt.halted = true
        halt.reason = "\(release) was already halted: \(RolloutHalt.percent(share)) of \(tried) devices gave it up"
        return halt
    }
}
