import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// `cenariusd seed`: makes a preset folder match a remote, for CI images and app builds.
/// Files are downloaded into `<preset>/.cenarius-seed/`, verified, renamed into place, and the
/// table is written last, so an interrupted seed never leaves a table that lies about its files.
public struct Seeder: Sendable {
    public let remote: Remote
    public let preset: Preset
    public let transfer: TransferOptions
    public let verifier: TableSignatureVerifier?

    public init(remote: Remote, preset: Preset, transfer: TransferOptions, verifier: TableSignatureVerifier? = nil) {
        self.remote = remote
        self.preset = preset
        self.transfer = transfer
        self.verifier = verifier
    }

    public struct Report: Sendable, Codable {
        public var entries = 0
        public var downloadedFiles = 0
        public var downloadedBytes: Int64 = 0
        public var copiedFiles = 0
        public var keptFiles = 0
        public var removedFiles = 0
        /// `--check`: uris whose preset file is missing or does not match the remote table.
        public var mismatched: [String] = []
        public var seconds = 0.0
    }

    var staging: String { FileSystem.join(preset.root, ".cenarius-seed") }

    public func seed(check: Bool, progress: ((TransferProgress) -> Void)? = nil) throws(CenariusError) -> Report {
        let started = FileSystem.monotonic()
        let downloader = try Downloader(options: transfer)
        guard case .content(let bytes, _) = try downloader.fetchDocument(remote.tableURL, validators: nil) else {
            throw .remote("\(remote.tableURL) answered 304 to an unconditional request")
        }
        let table = try RouteTable.parse(bytes, source: remote.tableURL)
        if let verifier {
            _ = try verifier.verify(table: bytes, remote: remote, downloader: downloader, inForce: nil)
        }
        var report = Report()
        report.entries = table.count
        if check {
            report.mismatched = try mismatches(table)
            report.seconds = FileSystem.monotonic() - started
            return report
        }
        try FileSystem.makeDirectories(preset.root)
        let old = (try? preset.table()) ?? .empty
        // A file the old table vouches for with the same hash is kept without re-reading it.
        var missing: [ContentHash: [RouteEntry]] = [:]
        var order: [ContentHash] = []
        for entry in table.entries {
            if old[entry.uri]?.hash == entry.hash, preset.folder.file(entry.uri) != nil {
                report.keptFiles += 1
                continue
            }
            if missing[entry.hash] == nil { order.append(entry.hash) }
            missing[entry.hash, default: []].append(entry)
        }
        FileSystem.removeTree(staging)
        try FileSystem.makeDirectories(staging)
        defer { FileSystem.removeTree(staging) }
        let files = order.map { hash in
            let entry = missing[hash]![0]
            return FileDownload(url: remote.fileURL(entry.uri), destination: staging + "/" + hash.hex, expected: hash, label: entry.uri.value)
        }
        let results = downloader.download(files, progress: progress)
        var made = Set<String>()
        for (file, result) in zip(files, results) {
            let bytes: Int64
            switch result {
            case .success(let size): bytes = size
            case .failure(let error): throw CenariusError(error.code, error.message + "; the preset's table was not changed")
            }
            report.downloadedFiles += 1
            report.downloadedBytes += bytes
            let entries = missing[file.expected]!
            for (i, entry) in entries.enumerated() {
                let target = FileSystem.join(preset.root, entry.uri.value)
                let parent = FileSystem.parentDirectory(of: target)
                if !made.contains(parent) {
                    try FileSystem.makeDirectories(parent)
                    made.insert(parent)
                }
                if FileSystem.kind(target) == S_IFDIR { FileSystem.removeTree(target) }
                if i == entries.count - 1 {
                    guard rename(file.destination, target) == 0 else { throw FileSystem.failure("cannot move into place", target) }
                } else {
                    try copy(file.destination, to: target)
                    report.copiedFiles += 1
                }
            }
        }
        for entry in old.entries where table[entry.uri] == nil {
            if preset.folder.file(entry.uri) != nil, unlink(FileSystem.join(preset.root, entry.uri.value)) == 0 {
                report.removedFiles += 1
            }
        }
        if verifier != nil, case .content(let signature, _) = try downloader.fetchDocument(remote.signatureURL, validators: nil, maxBytes: 64 << 10) {
            try FileSystem.writeAtomically(signature, to: preset.tablePath + ".sig")
        }
        try FileSystem.writeAtomically(bytes, to: preset.tablePath)
        report.seconds = FileSystem.monotonic() - started
        return report
    }

    /// Re-hashes every preset file the remote table lists.
    func mismatches(_ table: RouteTable) throws(CenariusError) -> [String] {
        var out: [String] = []
        for entry in table.entries {
            guard let path = preset.folder.file(entry.uri),
                  let (hash, _) = try? FileSystem.hashFile(path, algorithm: entry.hash.algorithm), hash == entry.hash else {
                out.append(entry.uri.value)
                continue
            }
        }
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
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", temporary) }
        do {
            _ = try FileSystem.hashFile(source, algorithm: .md5, copyTo: fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, target) == 0 else { throw FileSystem.failure("cannot move into place", target) }
    }
}
