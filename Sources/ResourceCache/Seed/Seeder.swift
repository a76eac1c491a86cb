package import RouteSync
package import Transport
#if canImport(Glibc)
import Glibc
#endif

/// `cenariusd seed`: makes a preset folder match a remote, for CI images and app builds.
/// New paths are downloaded straight into place; files that replace existing ones wait in
/// `<preset>/.cenarius-seed/` until every download is verified. The old table stops naming a
/// file before that file changes and the new table is written last, so an interrupted seed
/// never leaves a table that lies about its files, and one whose downloads fail leaves the folder as it was.
package struct Seeder: Sendable {
    package let remote: Remote
    /// Tried in order after `remote`, for the table and for each file.
    package let mirrors: [Remote]
    package let preset: Preset
    package let transfer: TransferOptions
    package let verifier: TableSignatureVerifier?

    package init(remote: Remote, mirrors: [Remote] = [], preset: Preset, transfer: TransferOptions, verifier: TableSignatureVerifier? = nil) {
        self.remote = remote
        self.mirrors = mirrors
        self.preset = preset
        self.transfer = transfer
        self.verifier = verifier
    }

    package struct Report: Sendable, Codable {
        package var entries = 0
        package var downloadedFiles = 0
        package var downloadedBytes: Int64 = 0
        /// Bytes on the wire and bytes the downloaded files hold (B8), as in SyncReport.
        package var bytesFetched: Int64 = 0
        package var bytesHeld: Int64 = 0
        package var patchedFiles = 0
        package var compressedFiles = 0
        package var copiedFiles = 0
        package var keptFiles = 0
        package var removedFiles = 0
        /// `--check`: uris whose preset file is missing or does not match the remote table.
        package var mismatched: [String] = []
        package var seconds = 0.0
    }

    var staging: String { FileSystem.join(preset.root, ".cenarius-seed") }

    package func seed(check: Bool, progress: ((TransferProgress) -> Void)? = nil) throws(CenariusError) -> Report {
        let started = FileSystem.monotonic()
        let downloader = try Downloader(options: transfer)
        let (remote, bytes, table, signed) = try fetchTable(downloader)
        let mirrors = ([self.remote] + self.mirrors).filter { $0 != remote }
        var report = Report()
        report.entries = table.count
        if check {
            report.mismatched = try mismatches(table)
            report.seconds = FileSystem.monotonic() - started
            return report
        }
        try FileSystem.makeDirectories(preset.root)
        let old = (try? preset.table()) ?? .empty
        FileSystem.removeTree(staging)  // left by a seed that was killed
        defer { FileSystem.removeTree(staging) }
        let plan = SeedPlan(table: table, old: old, preset: preset, remote: remote, mirrors: mirrors, staging: staging)
        report.keptFiles = plan.kept
        let files = plan.files
        let fetched = Fetched(remote: remote, bytes: bytes, table: table, signed: signed?.verified, downloader: downloader)
        let results = try download(files, of: fetched, old: old, report: &report, progress: progress)
        for case .failure(let error) in results {
            plan.fresh.undo(files: zip(files, plan.staged).filter { !$1 }.map(\.0.destination))
            throw error.appending("; the preset was not changed")
        }
        try forgetReplaced(old: old, table: table, placing: plan.fetch.flatMap(plan.entries))
        // Files the new release drops go first: one may stand where the new release has a folder
        // (old `js`, new `js/app.js`). The table no longer lists them (forgetReplaced).
        for entry in old.entries where table[entry.uri] == nil {
            if preset.folder.file(entry.uri) != nil, unlink(target(entry)) == 0 {
                report.removedFiles += 1
            }
        }
        report.downloadedFiles = results.count
        for case .success(let size) in results { report.downloadedBytes += size }
        // A file downloaded into place, the only path with its content, is where it belongs already.
        for i in plan.fetch.indices where plan.staged[i] || !plan.sharing.isEmpty {
            let source = files[i].destination
            let others = plan.entries(plan.fetch[i]).map(target).filter { $0 != source }
            for (n, path) in others.enumerated() {
                if FileSystem.kind(path) == S_IFDIR { FileSystem.removeTree(path) }
                if plan.staged[i] && n == others.count - 1 {
                    try moveIntoPlace(source, path)
                } else {
                    try copy(source, to: path)
                    report.copiedFiles += 1
                }
            }
        }
        // Exactly the sidecar and manifest verified with this table: a second fetch could bring others (G8).
        if let signed {
            if let manifest = signed.manifest { try FileSystem.writeAtomically(manifest, to: preset.tablePath + ".release") } else { unlink(preset.tablePath + ".release") }
            try FileSystem.writeAtomically(signed.verified.sidecar, to: preset.tablePath + ".sig")
        }
        try FileSystem.writeAtomically(bytes, to: preset.tablePath)
        report.seconds = FileSystem.monotonic() - started
        return report
    }

    /// The table from the first remote that gives a good one; when signing is on, verified with the
    /// release manifest beside it (if any), and the bytes of both that were verified.
    private func fetchTable(_ downloader: Downloader) throws(CenariusError) -> (Remote, [UInt8], RouteTable, (verified: TableSignatureVerifier.Verified, manifest: [UInt8]?)?) {
        try Mirrors.first([remote] + mirrors) { (remote, _) throws(Mirrors.Failure) in
            do throws(CenariusError) {
                guard case .content(let bytes, _) = try downloader.fetchDocument(remote.tableURL, validators: nil) else {
                    throw .remote("\(remote.tableURL) answered 304 to an unconditional request")
                }
                let table = try RouteTable.parse(bytes, source: remote.tableURL)
                guard let verifier else { return (remote, bytes, table, nil) }
                let manifest = try fetchManifest(remote, downloader)
                let verified = try verifier.verify(table: bytes, manifest: manifest, remote: remote, downloader: downloader)
                return (remote, bytes, table, (verified, manifest))
            } catch {
                throw Mirrors.Failure(error)
            }
        }
    }

    /// The release manifest beside the table (G10), which a signature covers too; nil when there is none.
    private func fetchManifest(_ remote: Remote, _ downloader: Downloader) throws(CenariusError) -> [UInt8]? {
        do throws(CenariusError) {
            guard case .content(let bytes, _) = try downloader.fetchDocument(remote.manifestURL, validators: nil, maxBytes: 64 << 10) else {
                throw .remote("\(remote.manifestURL) answered 304 to an unconditional request")
            }
            return bytes
        } catch {
            if error.isMissingRemoteFile { return nil }
            throw error
        }
    }

    private func target(_ entry: RouteEntry) -> String { FileSystem.join(preset.root, entry.uri.value) }

    /// Before any file the old table lists is overwritten or removed, the table stops listing it,
    /// so that a seed killed halfway leaves a table that is true of every file it names.
    private func forgetReplaced(old: RouteTable, table: RouteTable, placing: @autoclosure () -> [RouteEntry]) throws(CenariusError) {
        guard old.count > 0 else { return }
        let replaced = Set(placing().map(\.uri))
        let kept = old.entries.filter { !replaced.contains($0.uri) && table[$0.uri] != nil }
        guard kept.count < old.count, let reduced = try? RouteTable(entries: kept) else { return }
        unlink(preset.tablePath + ".sig")  // it signs the old table, not this one
        try FileSystem.writeAtomically(reduced.serialized(), to: preset.tablePath)
    }

    /// Re-hashes every preset file the remote table lists, side by side (BatchHasher).
    func mismatches(_ table: RouteTable) throws(CenariusError) -> [String] {
        let present = table.entries.compactMap { entry in preset.folder.file(entry.uri).map { (entry: entry, path: $0) } }
        let hashes = BatchHasher().hashEach(present.map { ($0.path, $0.entry.hash.algorithm) })
        var matching = Set<URIPath>()
        // A link the folder serves (it resolves inside) is checked by the file it points to.
        for (file, result) in zip(present, hashes) where result?.0 == file.entry.hash {
            matching.insert(file.entry.uri)
        }
        var out = table.entries.filter { !matching.contains($0.uri) }.map(\.uri.value)
        if let presetBytes = try? FileSystem.readFile(preset.tablePath),
           let presetTable = try? RouteTable.parse(presetBytes, source: preset.tablePath), presetTable != table {
            out.append(preset.routesName)
        } else if !FileSystem.exists(preset.tablePath) {
            out.append(preset.routesName)
        }
        return out
    }

    private func copy(_ source: String, to target: String) throws(CenariusError) {
        let temporary = target + ".cenarius-tmp"
        let fd = FileSystem.createFile(temporary)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", temporary) }
        do {
            _ = try FileSystem.hashFile(source, algorithm: .md5, copyTo: fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        try moveIntoPlace(temporary, target)
    }

    private func moveIntoPlace(_ source: String, _ target: String) throws(CenariusError) {
        if rename(source, target) == 0 { return }
        if errno == ENOENT { try FileSystem.makeDirectories(FileSystem.parentDirectory(of: target)) }
        guard rename(source, target) == 0 else { throw FileSystem.failure("cannot move into place", target) }
    }
}
