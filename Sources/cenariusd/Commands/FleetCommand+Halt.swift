import ArgumentParser
import Fleet
import Publishing
import ReportHeader
import RouteSync

/// Halts the rollout of a remote folder's release (G10's `"halted": true`) when the fleet's reports
/// say so, through the one halt path (`Halting`): the channel's release republished halted, under
/// the publish lock, with its release record. A folder whose head names no release index (`routes`
/// without `--compress`, or written before heads) cannot be republished from a store: the writer
/// writes its release again in place, from its exact table with the manifest halted (`haltInPlace`).
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
        let name = try current(state, folder: folder).name
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
            if let folder { return try haltInPlace(halt, why: why, folder: folder, destination: destination) }
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

    /// The release in force and its manifest: the head's, or with `folder` (a head that names no
    /// index) the manifest beside the folder's table. Devices report a release by its manifest's
    /// name, else by a short hash of its table.
    private func current(_ state: RemoteState, folder: String?) throws -> (manifest: ReleaseManifest, name: String) {
        if let head = state.head, folder == nil {
            let manifest = try Halting.manifest(of: head, source: remote)
            return (manifest, Halting.name(of: head, manifest: manifest))
        }
        guard let folder else {
            throw CenariusError.notFound("\(remote) has no head of channel \(ReleaseHead.defaultChannel): nothing to halt")
        }
        let manifestPath = FileSystem.join(folder, routesName) + ".release"
        let bytes = try? FileSystem.readFile(manifestPath, limit: 64 << 10)
        let manifest = try bytes.map { bytes throws(CenariusError) in try ReleaseManifest.parse(bytes, source: manifestPath) } ?? ReleaseManifest()
        let name = try state.head.map { Halting.name(of: $0, manifest: manifest) }
            ?? manifest.release ?? FleetReport.releaseName(ofTable: FileSystem.readFile(FileSystem.join(folder, routesName)))
        return (manifest, name)
    }

    /// The in-place halt under the folder's publish lock, as every other release writer: what
    /// the folder holds is read again under it, so a publish or halt that ran since the counts
    /// were read wins and this one says so.
    private func haltInPlace(_ decided: FleetCommand.Summary.Halt, why: String, folder: String,
                             destination: any Destination) throws -> FleetCommand.Summary.Halt {
        try PublishLocking.run(destination) { _ in
            var halt = decided
            let state = try RemoteState.read(destination, channel: ReleaseHead.defaultChannel, routesName: routesName, records: 0)
            guard state.head?.index == nil else {
                halt.reason = "not halted: \(remote) was published with a release index since its counts were read; run fleet --halt-above again"
                return halt
            }
            let now = try current(state, folder: folder)
            guard now.name == decided.release else {
                halt.reason = "not halted: \(decided.release) is no longer the release of \(remote) (\(now.name) was published since)"
                return halt
            }
            if now.manifest.rollout?.halted == true { return halt.already(halt.failedPercent) }
            let wrote = try writeInPlace(now.manifest, folder: folder)
            halt.halted = true
            halt.reason = "halted \(decided.release): \(why); \(wrote)"
            return halt
        }
    }

    /// A folder whose head names no index: the release written again in place by the
    /// `ReleaseWriter` from the folder's exact table, with the manifest halted, re-signed when
    /// signed (the previous sidecar's rotations and lifetime kept), its release record (origin
    /// `fleet --halt-above`), then a new head last, as `releases` lists every release.
    private func writeInPlace(_ manifest: ReleaseManifest, folder: String) throws(CenariusError) -> String {
        let tablePath = FileSystem.join(folder, routesName)
        let sidecar = tablePath + ".sig"
        // Checked by the command too; here again, right before the write it protects.
        try Self.checkKeys(signKeys, sidecar: sidecar)
        let table = try FileSystem.readFile(tablePath)
        let parsed = try RouteTable.parse(table, source: tablePath)
        let bytes = parsed.entries.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
        var writer = ReleaseWriter(build: folder, built: .init(table: parsed, bytes: bytes))
        writer.tableBytes = table
        writer.routesName = routesName
        writer.manifest = Halting.setting(true, in: manifest).serialized()
        let headPath = FileSystem.join(folder, ReleaseHead.name(routesName: routesName, channel: ReleaseHead.defaultChannel))
        let legacyIndex = FileSystem.join(folder, ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(table)))
        writer.previous = .init(sidecar: try? FileSystem.readFile(sidecar, limit: 64 << 10),
                                head: try? ReleaseHead.parse(FileSystem.readFile(headPath, limit: ReleaseHead.maxBytes), source: headPath),
                                legacyIndex: try? FileSystem.readFile(legacyIndex, limit: 32 << 20))
        if !signKeys.isEmpty {
            var signer = ReleaseSigner(keys: signKeys)
            signer.resigning = true
            writer.signer = signer
        }
        // The record before the head, as every release's: `releases` never misses one devices run.
        writer.beforeHead = { head throws(CenariusError) in
            let record = try ReleaseRecord(head: head.serialized(), published: FileSystem.now(), origin: "fleet --halt-above",
                                           files: parsed.count, bytes: bytes)
            let recordPath = FileSystem.join(folder, record.key)
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: recordPath))
            try FileSystem.writeAtomically(record.serialized(), to: recordPath)
        }
        _ = try writer.write(into: folder, warn: Output.warn)
        return "wrote \(tablePath).release\(signKeys.isEmpty ? "" : " and re-signed \(sidecar)")"
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
