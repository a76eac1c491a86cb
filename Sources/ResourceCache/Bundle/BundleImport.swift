#if canImport(Glibc)
import Glibc
#endif
import ReportHeader
package import RouteSync
package import Transport

/// `cenariusd import`: a bundle applied as a release from the origin would be (docs/bundles.md).
/// The bundle is synced from as a `file://` remote whose head is its only word, by the sync every
/// remote goes through — the same keys and thresholds, anti-rollback, expiry, rollout gates,
/// holds and install policies — with the forms plan kept to what the bundle holds. Nothing is
/// asked of any network. The origin's poll records (its head's validators, its compressed
/// table's marker) are left as they were, so the next poll of the origin costs what it did.
package struct BundleImport: Sendable {
    package let settings: SyncSettings
    package var switching: InstallPolicy.Switching = .request

    package init(settings: SyncSettings) {
        self.settings = settings
    }

    /// Imports the bundle at `path`; then writes the device's report beside it, whatever the
    /// outcome, and tells `warn` when that cannot be done (the import's outcome stands).
    package func run(_ path: String, cancel: CancelToken? = nil, progress: ((TransferProgress) -> Void)? = nil,
                     warn: (String) -> Void) throws(CenariusError) -> SyncReport {
        let bundle: OpenedBundle
        do {
            bundle = try OpenedBundle.open(path, layout: settings.cache, maxFileSize: settings.transfer.maxFileSize)
        } catch {
            // A damaged or truncated bundle is reported too; a path that names no bundle at all
            // (missing, a link, a FIFO) gets nothing written beside it.
            let given = FileSystem.absolute(path)
            if [S_IFREG, S_IFDIR].contains(FileSystem.kind(given)) {
                _ = report(.failure(error), bundle: given, reportFolder: OpenedBundle.reportFolder(of: given), warn: warn)
            }
            throw error
        }
        let channel = settings.channel
        let result = Result { () throws(CenariusError) in try apply(bundle, channel: channel, cancel: cancel, progress: progress) }
        let imported = report(result, bundle: bundle.path, reportFolder: bundle.reportFolder, warn: warn)
        var done = try result.get()
        done.imported = imported
        return done
    }

    /// The device's report, written beside the bundle (BundleReport); what became of it.
    private func report(_ result: Result<SyncReport, CenariusError>, bundle: String, reportFolder: String, warn: (String) -> Void) -> SyncReport.Imported {
        var imported = SyncReport.Imported(bundle: bundle)
        let layout = settings.cache
        guard settings.report,
              let header = DeviceReport.header(settings: settings, currentMeta: try? GenerationStore(layout: layout).current()?.meta(), pending: false) else {
            return imported
        }
        let now = FileSystem.now()
        let outcome: String
        switch result {
        case .success(let report): outcome = report.outcome.rawValue
        case .failure: outcome = "failed"
        }
        // A stick pulled out leaves its mount point behind: a report there would be on the device's
        // own disk, where no technician takes it from.
        guard FileSystem.exists(bundle) else {
            imported.reportProblem = "no report was written: \(bundle) is gone (the stick was removed); the import's outcome stands"
            warn(imported.reportProblem ?? "")
            return imported
        }
        let device = FleetReport.deviceHash(settings.rollout.device(layout: layout).id)
        let line = BundleReport.line(header: header, time: now, bundle: FileSystem.lastComponent(bundle), outcome: outcome, error: result.error)
        do {
            imported.report = try BundleReport.write(line, device: device, time: now, into: reportFolder)
        } catch {
            imported.reportProblem = "the report was not written beside the bundle (\(error.message)); the import's outcome stands"
            warn(imported.reportProblem ?? "")
        }
        return imported
    }

    private func apply(_ bundle: OpenedBundle, channel: String, cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> SyncReport {
        if let manifest = bundle.manifest {
            guard let release = manifest.release(for: channel) else {
                let held = manifest.releases.map(\.channel).joined(separator: ", ")
                throw .notFound("\(bundle.path) carries channel \(held.isEmpty ? "none" : held), and this device follows \(channel): nothing applied")
            }
            let current = currentTable()
            guard release.serves(current) else {
                let bases = release.from.map { String($0.prefix(12)) }.joined(separator: ", ")
                throw .notFound("\(bundle.path) is for devices on table \(bases.isEmpty ? "none" : bases)\(release.firstInstall ? " or a first install" : ""), "
                    + "and this device is on table \(current.map { String($0.prefix(12)) } ?? "none"): nothing applied (bundle it with --from this device's release)")
            }
        }
        return try sync(bundle, channel: channel, cancel: cancel, progress: progress)
    }

    private func sync(_ bundle: OpenedBundle, channel: String, cancel: CancelToken?, progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> SyncReport {
        let layout = settings.cache
        try checkVersion(bundle, channel: channel)
        var settings = settings
        settings.remote = try bundle.remote(routesName: settings.preset.routesName, channel: channel)
        settings.mirrors = []
        settings.storeListing = bundle.listing
        // The bundle's own poll records would replace the origin's: kept aside and put back.
        let kept = [layout.headState, layout.tableForm].map { ($0, try? FileSystem.readFile($0, limit: 1 << 20)) }
        defer {
            for (path, bytes) in kept {
                if let bytes { try? FileSystem.writeAtomically(bytes, to: path, durable: false) } else { FileSystem.removeTree(path) }
            }
        }
        var syncer = Syncer(settings: settings)
        syncer.switching = switching
        do {
            return try syncer.sync(cancel: cancel, progress: progress)
        } catch where bundle.unreadable() != nil {
            // The stick was pulled out, or fails: said as what it is, not as the damage it looks like.
            throw CenariusError.remote("\(bundle.path) could not be read to its end (\(bundle.unreadable() ?? "")): the stick was removed or fails; "
                + "nothing applied, the release in force stays")
        } catch where error.isMissingRemoteFile {
            // A form that did not decode left its file to a source the bundle does not hold: it was
            // altered, or cut short on the stick.
            throw CenariusError.integrity("\(bundle.path) is damaged or incomplete: \(error.message)")
        }
    }

    /// Versions never go back, signed or not: the bundle's head (its own bytes, not the manifest's
    /// word) is refused when older than the head the release in force came from. A signed one is
    /// refused by its signature's version too (G8); this holds where nothing is signed.
    private func checkVersion(_ bundle: OpenedBundle, channel: String) throws(CenariusError) {
        let name = ReleaseHead.name(routesName: settings.preset.routesName, channel: channel)
        guard let bytes = bundle.read(name, limit: ReleaseHead.maxBytes),
              let head = try? ReleaseHead.parse(bytes, source: bundle.path + ": " + name),
              let inForce = (try? GenerationStore(layout: settings.cache).current()?.meta())??.headVersion else { return }
        if head.version < inForce {
            throw .integrity("\(bundle.path) carries version \(head.version) of channel \(channel), older than version \(inForce) in force: versions never go back, nothing applied")
        }
    }

    /// SHA-256 of the table this device is on: the generation in force, else its preset's.
    private func currentTable() -> String? {
        if let generation = GenerationStore(layout: settings.cache).current() {
            if let digest = (try? generation.meta())?.tableSHA256 { return digest }
            return (try? FileSystem.readFile(generation.tablePath)).map(ReleaseIndex.tableDigest)
        }
        return (try? FileSystem.readFile(settings.preset.tablePath, limit: RouteTable.maxBytes)).map(ReleaseIndex.tableDigest)
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension FileSystem {
    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
