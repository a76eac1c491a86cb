package import RouteSync

/// The head and the store objects it names (docs/remote-layout.md), written after everything
/// else so that a folder uploaded in name order, or read while a release is written, never has a
/// head naming what is not there yet. Objects are only added, never changed or removed. The
/// `ReleaseWriter` writes it with every release (`fleet --halt-above` in place too, with the halted manifest).
package struct HeadWriter: Sendable {
    /// Where the head and its store objects are written (the release's folder).
    package let directory: String
    package let routesName: String
    package var channel = ReleaseHead.defaultChannel
    /// The channel's head before this release: its version, the tables it patches from, and the
    /// signatures another key joins.
    package var previous: ReleaseHead?
    /// Private key files that sign the head, as they sign the sidecar.
    package var keys: [String] = []

    package init(directory: String, routesName: String, channel: String = ReleaseHead.defaultChannel, previous: ReleaseHead? = nil) {
        self.directory = directory
        self.routesName = routesName
        self.channel = channel
        self.previous = previous
    }

    package var headPath: String { FileSystem.join(directory, ReleaseHead.name(routesName: routesName, channel: channel)) }

    /// What a head names: the table's, manifest's and index's exact bytes, the table compressed
    /// (then the index), and earlier tables' exact bytes to patch from (`--delta-from`'s).
    package struct Parts: Sendable {
        package var table: [UInt8]
        package var manifest: [UInt8]?
        package var index: [UInt8]?
        package var tableForm: [UInt8]?
        package var bases: [[UInt8]] = []

        package init(table: [UInt8], manifest: [UInt8]?, index: [UInt8]? = nil, tableForm: [UInt8]? = nil, bases: [[UInt8]] = []) {
            self.table = table
            self.manifest = manifest
            self.index = index
            self.tableForm = tableForm
            self.bases = bases
        }
    }

    /// Writes `_cenarius/t/<S>.json`, and with forms `_cenarius/i/<X>.json`, the table's form as
    /// `_cenarius/t/<O>.zst` and the table's patches from `bases` and from the tables the previous
    /// head named, then the head naming them, signed with `keys` like the sidecar `signed` (same
    /// version, expiry and rotations).
    package func write(_ parts: Parts, signed: TableSignature?) throws(CenariusError) -> ReleaseHead {
        let head = try make(parts, signed: signed)
        try commit(head)
        return head
    }

    /// The head `write` writes, with every store object it names written: what a caller that
    /// writes something of its own before the head (a release record) gets between the two.
    package func make(_ parts: Parts, signed: TableSignature?) throws(CenariusError) -> ReleaseHead {
        let digest = ReleaseIndex.tableDigest(parts.table)
        try storeObject(parts.table, at: ReleaseHead.tablePath(digest))
        // Signed: the sidecar's version. Unsigned: one above the previous head's all the same, so
        // that the head's version orders releases whether or not a device checks signatures.
        let version: Int64
        if let signed { version = signed.version } else { version = try ReleaseSigner.nextVersion(after: previous?.version, now: FileSystem.now()) }
        var head = ReleaseHead(channel: channel, version: version, table: digest, tableSize: Int64(parts.table.count))
        head.release = parts.manifest
        if let index = parts.index {
            try name(index, tableForm: parts.tableForm, in: &head, table: parts.table, bases: parts.bases)
            if let parsed = try? ReleaseIndex.parse(index, source: headPath) { head.hintPacks(from: parsed) }
        }
        if let signed { head.signature = try signature(of: head, like: signed, table: parts.table, index: parts.index).serialized() }
        head.fitFirstWindow()
        return head
    }

    /// Writes `head` as the channel's head: last, naming only what is already written.
    package func commit(_ head: ReleaseHead) throws(CenariusError) {
        let before = FileSystem.modificationTime(headPath)
        try FileSystem.writeAtomically(head.serialized(), to: headPath)
        // A static server's validators must see a new head even when it came within the second.
        if let before { FileSystem.advanceModificationTime(headPath, past: before) }
    }

    /// The index and the table's form as store objects, and the table's patches, named in `head`.
    private func name(_ index: [UInt8], tableForm: [UInt8]?, in head: inout ReleaseHead, table: [UInt8], bases: [[UInt8]]) throws(CenariusError) {
        let indexDigest = ReleaseIndex.tableDigest(index)
        head.index = indexDigest
        try storeObject(index, at: ReleaseHead.indexPath(indexDigest))
        guard let form = tableForm else { return }
        let formDigest = ReleaseIndex.tableDigest(form)
        try storeObject(form, at: ReleaseHead.tableFormPath(formDigest))
        head.tableForm = formDigest
        head.tableFormSize = Int64(form.count)
        // The same table and index as the previous head (a halt, a run again): its patches still give them.
        if let previous, previous.table == head.table, previous.index == indexDigest, bases.isEmpty {
            head.tablePatches = previous.tablePatches
        } else {
            head.tablePatches = try tablePatches(to: table + index, formSize: form.count, bases: bases, excluding: head.table)
        }
    }

    /// The head's signature: another key over the same release (thresholds) joins the previous
    /// head's signatures, as the sidecar's grow; else a new one with the sidecar's version and times.
    private func signature(of head: ReleaseHead, like signed: TableSignature, table: [UInt8], index: [UInt8]?) throws(CenariusError) -> TableSignature {
        let keys = try keys.map { path throws(CenariusError) in try SigningKeys.readPrivate(path) }
        let files = head.signedFiles(table: table, index: index)
        let earlier = previous?.signature.flatMap { try? TableSignature.parse($0, source: headPath) }
        var signature: TableSignature
        if let same = earlier.flatMap({ $0.version == signed.version ? $0.coSignable(by: keys, over: files, source: headPath) : nil }) {
            signature = same
        } else {
            signature = try TableSignature.unsigned(covering: files, version: signed.version, signedAt: signed.signedAt,
                                                    expires: signed.expires, rotations: signed.rotations)
        }
        for key in keys { try signature.sign(with: key) }
        return signature
    }

    /// Patches to `target` (the table, then the index) from the last few tables: `bases`, then the
    /// previous head's table and the bases of its patches, as the store holds them. A patch no
    /// smaller than the compressed table is left out: a device fetches the form then.
    private func tablePatches(to target: [UInt8], formSize: Int, bases: [[UInt8]], excluding digest: String) throws(CenariusError) -> [ReleaseHead.TablePatch] {
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
}
