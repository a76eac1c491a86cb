extension FormPublisher {
    /// The solid pack (most of a first publish's CPU) is compressed on another core while the
    /// files' forms are made here: the site is read first, as the pack holds it in memory anyway.
    func startSolidPack(_ run: inout Run) throws(CenariusError) {
        guard run.solid != nil, run.siteBytes <= SolidPack.maxContent, !run.files.isEmpty else { return }
        var contents: [[UInt8]] = []
        for entry in run.files { contents.append(try verifiedBytes(entry)) }
        let site = contents
        run.solidMade = Pending { () throws(CenariusError) in try SolidPack.make(site) }
        run.solid = contents
    }

    /// One file of the table, the `ordinal`th in pack order: its form or plain copy, its frame in
    /// the packs, and its patches from the OLDs that lack it.
    func add(_ entry: RouteEntry, ordinal: Int, to run: inout Run) throws(CenariusError) {
        let bytes = try run.solidMade != nil ? run.solid![ordinal] : verifiedBytes(entry)
        run.solidBytes += bytes.count
        if run.solidMade == nil { if run.solidBytes <= SolidPack.maxContent { run.solid?.append(bytes) } else { run.solid = nil } }
        run.summary.files += 1
        run.summary.plainBytes += Int64(bytes.count)
        let everyOld = run.oldSets.allSatisfy { $0.contains(entry.hash) }
        if run.carrying, everyOld, run.takeCarried(entry) { return }
        // What changed since a base release keeps its form: a device on an older release, or a
        // bundle from one, that no delta pack starts from fetches it on its own.
        let alone = run.packedAlone(entry.hash) && everyOld
        if alone, run.pack == nil {
            // Its pack is taken as it is and no delta pack wants its frame: nothing to compress.
            run.index.plain.insert(entry.hash)
            run.atURI.append(entry)
            return
        }
        if !alone, let size = listedForm(entry.hash, below: bytes.count, run: run) {
            // Named by the file's hash and checked when it was written, and no pack of this release
            // takes it whole: it is read (and checked again) only if a delta frame is the form itself.
            run.summary.reusedForms += 1
            run.summary.compressedForms += 1
            run.summary.compressedBytes += Int64(size)
            run.formBytes[entry.hash] = Int64(size)
            try addDeltaFrames(of: entry, bytes: bytes, formSize: size, form: nil, to: &run)
            return
        }
        let compressed: [UInt8]
        if let stored = storedForm(entry.hash, of: bytes, root: run.root) {
            compressed = stored
            run.summary.reusedForms += 1
        } else {
            compressed = try Zstd.compress(bytes)
        }
        // The packs hold every file as a frame, even one zstd cannot shrink: the frames are found
        // by decoding, one after another, so none may be missing.
        try run.pack?.append(compressed)
        if alone {
            // In the packs and at its uri: an object of its own only if no pack is kept after all (finishPacks).
            run.index.plain.insert(entry.hash)
            run.atURI.append(entry)
        } else if compressed.count < bytes.count {
            try write(compressed, to: ReleaseIndex.formPath(entry.hash), root: run.root)
            run.summary.compressedForms += 1
            run.summary.compressedBytes += Int64(compressed.count)
            run.formBytes[entry.hash] = Int64(compressed.count)
        } else {
            // A copy, never a link: a build that rewrites the file in place would change the object.
            run.index.plain.insert(entry.hash)
            try write(bytes, to: ReleaseIndex.plainPath(entry.hash), root: run.root)
        }
        try addDeltaFrames(of: entry, bytes: bytes, formSize: compressed.count, form: compressed, to: &run)
    }

    /// The file's frame in the delta pack from each OLD that lacks it: a patch, or its form (`form`;
    /// nil: the store's, read now, or compressed again when that does not decode to the file).
    private func addDeltaFrames(of entry: RouteEntry, bytes: [UInt8], formSize: Int, form: [UInt8]?,
                                to run: inout Run) throws(CenariusError) {
        var form = form
        for k in olds.indices where !run.oldSets[k].contains(entry.hash) {
            if let patch = try deltaPatch(of: entry, bytes: bytes, formSize: formSize, from: k, run: &run) {
                try run.deltas[k].append(patch.bytes, base: patch.base)
                continue
            }
            if form == nil { form = storedForm(entry.hash, of: bytes, root: run.root) }
            if form == nil { form = try Zstd.compress(bytes) }
            try run.deltas[k].append(form ?? [])
        }
    }

    /// The size of the form the store lists for this file, when nothing but a delta frame may need
    /// its bytes: no pack of this release is being made from the files, and neither the output
    /// root nor a republish holds it (then it is taken from there, as before).
    func listedForm(_ hash: ContentHash, below size: Int, run: Run) -> Int? {
        let key = ReleaseIndex.formPath(hash)
        guard run.pack == nil, heldForms[key] == nil, FileSystem.regularFileSize(FileSystem.join(run.root, key)) == nil,
              let listed = storeSize?(key), listed < Int64(size) else { return nil }
        return Int(listed)
    }

    /// The patch that is the file's frame in the delta pack from the `k`th OLD: one from its file at
    /// the nearest uri (written once) when it is smaller than the compressed form and the file; nil: the form is.
    private func deltaPatch(of entry: RouteEntry, bytes: [UInt8], formSize: Int, from k: Int,
                            run: inout Run) throws(CenariusError) -> (bytes: [UInt8], base: ContentHash)? {
        guard let base = run.matches[k].base(for: entry.uri, size: Int64(bytes.count)),
              base.size + Int64(bytes.count) <= Self.patchWindowBudget else { return nil }
        let pair = ReleaseIndex.Patch(target: entry.hash, base: base.hash)
        let patch: [UInt8]
        // A base may be missing: `publish` fetches only those the remote still holds, and none for a patch it takes by name.
        if let baseBytes = try? FileSystem.readFile(FileSystem.join(olds[k].root, base.uri.value)),
           StreamingHasher.hash(baseBytes, base.hash.algorithm) == base.hash {
            if let stored = storedPatch(pair, of: bytes, base: baseBytes, holds: run.holds) { patch = stored } else { patch = try Zstd.compress(bytes, prefix: baseBytes) }
        } else if let held = heldPatch(pair, holds: run.holds) {
            patch = held
        } else {
            return nil
        }
        guard patch.count < min(formSize, bytes.count) else { return nil }
        if run.patched.insert(pair).inserted {
            try write(patch, to: ReleaseIndex.patchPath(pair), root: run.root)
            run.index.addPatch(pair, size: Int64(patch.count))
            run.summary.patches += 1
            run.summary.patchBytes += Int64(patch.count)
        }
        return (patch, base.hash)
    }
}
