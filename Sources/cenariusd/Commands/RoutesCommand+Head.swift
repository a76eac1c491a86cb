import RouteSync

/// The head and the store objects it names (docs/remote-layout.md), written after everything
/// else so that a folder uploaded in name order, or read while `routes` runs, never has a head
/// naming what is not there yet. Objects are only added, never changed or removed. `routes`
/// writes it with every release; `fleet --halt-above` again with the halted manifest.
struct HeadWriter {
    let directory: String
    let routesName: String
    var channel = ReleaseHead.defaultChannel

    var headPath: String { FileSystem.join(directory, ReleaseHead.name(routesName: routesName, channel: channel)) }

    /// The head beside the table, if one is there and reads.
    var current: ReleaseHead? { try? ReleaseHead.parse(FileSystem.readFile(headPath, limit: ReleaseHead.maxBytes), source: headPath) }

    /// The index the head beside the table names, from the store.
    var currentIndex: [UInt8]? {
        current?.index.flatMap { try? FileSystem.readFile(FileSystem.join(directory, ReleaseHead.indexPath($0)), limit: 32 << 20) }
    }

    /// The compressed table the head beside the table names, from the store.
    var currentTableForm: [UInt8]? {
        current?.tableForm.flatMap { try? FileSystem.readFile(FileSystem.join(directory, ReleaseHead.tableFormPath($0)), limit: 64 << 20) }
    }

    /// Writes `_cenarius/t/<S>.json`, and with forms `_cenarius/i/<X>.json`, `tableForm` (the table
    /// compressed, then the index) as `_cenarius/t/<O>.zst` and the table's patches from `bases`
    /// (earlier tables' exact bytes: `--delta-from`'s) and from the tables the previous head named,
    /// then the head naming them, signed with `keys` like the sidecar (same version, expiry and rotations).
    func write(table: [UInt8], manifest: [UInt8]?, index: [UInt8]?, tableForm: [UInt8]?, bases: [[UInt8]] = [], sidecar: String?,
               keys keyPaths: [String]) throws(CenariusError) -> ReleaseHead {
        let digest = ReleaseIndex.tableDigest(table)
        try storeObject(table, at: ReleaseHead.tablePath(digest))
        let previous = current
        let signed = try sidecar.map { path throws(CenariusError) in try TableSignature.parse(FileSystem.readFile(path, limit: 64 << 10), source: path) }
        // Signed: the sidecar's version. Unsigned: one above the previous head's all the same, so
        // that the head's version orders releases whether or not a device checks signatures.
        let version: Int64
        if let signed { version = signed.version } else { version = try RoutesCommand.nextVersion(after: previous?.version, now: FileSystem.now()) }
        var head = ReleaseHead(channel: channel, version: version, table: digest, tableSize: Int64(table.count))
        head.release = manifest
        if let index {
            let indexDigest = ReleaseIndex.tableDigest(index)
            head.index = indexDigest
            try storeObject(index, at: ReleaseHead.indexPath(indexDigest))
            if let form = tableForm {
                let formDigest = ReleaseIndex.tableDigest(form)
                try storeObject(form, at: ReleaseHead.tableFormPath(formDigest))
                head.tableForm = formDigest
                head.tableFormSize = Int64(form.count)
                // The same table and index as the previous head (a halt, a run again): its patches still give them.
                if let previous, previous.table == digest, previous.index == indexDigest, bases.isEmpty {
                    head.tablePatches = previous.tablePatches
                } else {
                    head.tablePatches = try tablePatches(to: table + index, formSize: form.count, bases: bases, previous: previous, excluding: digest)
                }
            }
        }
        if let index, let parsed = try? ReleaseIndex.parse(index, source: headPath) { head.hintPacks(from: parsed) }
        if let signed {
            let keys = try keyPaths.map { path throws(CenariusError) in try SigningKeys.readPrivate(path) }
            let files = head.signedFiles(table: table, index: index)
            let earlier = previous?.signature.flatMap { try? TableSignature.parse($0, source: headPath) }
            // Another key over the same release (thresholds): the head's signatures grow with the sidecar's.
            var signature: TableSignature
            if let same = earlier.flatMap({ $0.version == signed.version ? $0.coSignable(by: keys, over: files, source: headPath) : nil }) {
                signature = same
            } else {
                signature = try TableSignature.unsigned(covering: files, version: signed.version, signedAt: signed.signedAt,
                                                        expires: signed.expires, rotations: signed.rotations)
            }
            for key in keys { try signature.sign(with: key) }
            head.signature = signature.serialized()
        }
        head.fitFirstWindow()
        let before = FileSystem.modificationTime(headPath)
        try FileSystem.writeAtomically(head.serialized(), to: headPath)
        // A static server's validators must see a new head even when it came within the second.
        if let before { FileSystem.advanceModificationTime(headPath, past: before) }
        return head
    }

    /// Patches to `target` (the table, then the index) from the last few tables: `bases`, then the
    /// previous head's table and the bases of its patches, as the store holds them. A patch no
    /// smaller than the compressed table is left out: a device fetches the form then.
    private func tablePatches(to target: [UInt8], formSize: Int, bases: [[UInt8]], previous: ReleaseHead?,
                              excluding digest: String) throws(CenariusError) -> [ReleaseHead.TablePatch] {
        var candidates = bases.map { (ReleaseIndex.tableDigest($0), Optional($0)) }
        for earlier in [previous?.table].compactMap({ $0 }) + (previous?.tablePatches.map(\.from) ?? []) {
            candidates.append((earlier, nil))
        }
        var patches: [ReleaseHead.TablePatch] = []
        var seen: Set<String> = [digest]
        for (from, known) in candidates where patches.count < ReleaseHead.maxTablePatches && seen.insert(from).inserted {
            let stored = known ?? (try? FileSystem.readFile(FileSystem.join(directory, ReleaseHead.tablePath(from)), limit: RouteTable.maxBytes))
            guard let base = stored, ReleaseIndex.tableDigest(base) == from else { continue }
            let patch = try Zstd.compress(target, prefix: base)
            guard patch.count < formSize else { continue }
            let patchDigest = ReleaseIndex.tableDigest(patch)
            try storeObject(patch, at: ReleaseHead.tablePatchPath(patchDigest))
            // The newest base's patch rides in the head too: a device on the previous release needs no other request for its table.
            let inline = patches.isEmpty && patch.count <= ReleaseHead.maxInlinePatch ? patch : nil
            patches.append(ReleaseHead.TablePatch(from: from, digest: patchDigest, size: Int64(patch.count), inline: inline))
        }
        return patches
    }

    /// A store object: written once under the name of its content, never changed afterwards.
    private func storeObject(_ bytes: [UInt8], at relative: String) throws(CenariusError) {
        let path = FileSystem.join(directory, relative)
        if let existing = try? FileSystem.readFile(path, limit: bytes.count + 1), existing == bytes { return }
        try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
        try FileSystem.writeAtomically(bytes, to: path, durable: false)
    }

    /// Why the head beside the table does not agree with it (nil: it does, or there is none).
    func stale(table: [UInt8]) -> String? {
        guard FileSystem.exists(headPath) else { return nil }
        guard let bytes = try? FileSystem.readFile(headPath, limit: ReleaseHead.maxBytes),
              let head = try? ReleaseHead.parse(bytes, source: headPath) else { return "\(headPath) is not a head this version reads: run routes again" }
        guard head.table == ReleaseIndex.tableDigest(table), head.tableSize == Int64(table.count) else {
            return "\(headPath) names another table (devices that poll it get another release): run routes again"
        }
        for (relative, digest) in head.objects {
            guard let object = try? FileSystem.readFile(FileSystem.join(directory, relative), limit: 64 << 20),
                  ReleaseIndex.tableDigest(object) == digest else {
                return "\(FileSystem.join(directory, relative)), which \(headPath) names, is missing or not what its name says: run routes again"
            }
        }
        // What the index names for the table's files: a store that lost one (an upload that skipped
        // a folder) costs devices a fallback at best.
        guard let digest = head.index,
              let bytes = try? FileSystem.readFile(FileSystem.join(directory, ReleaseHead.indexPath(digest)), limit: 32 << 20),
              let index = try? ReleaseIndex.parse(bytes, source: headPath), let parsed = try? RouteTable.parse(table, source: headPath) else { return nil }
        for relative in index.objects(for: parsed) where index.storedPlain || !relative.hasPrefix(ReleaseIndex.folder + "/f/") {
            guard FileSystem.regularFileSize(FileSystem.join(directory, relative)) != nil else {
                return "\(FileSystem.join(directory, relative)), which the release index names, is missing: run routes again (or upload the whole folder)"
            }
        }
        return nil
    }
}
