extension FormPublisher {
    /// After the files: the carried pack kept or given up, each pack moved to its name or taken as
    /// the store holds it, and the files no pack holds after all given objects of their own.
    func finishPacks(_ run: inout Run) throws(CenariusError) {
        if run.carrying, let carry, let k = run.carriedFrom {
            if Double(run.deltas[k].size) <= Carry.maxShare * Double(carry.pack.size) {
                run.index.carriedPack = ReleaseIndex.CarriedPack(from: carry.from, pack: carry.pack, releases: carry.releases + 1)
                run.summary.carriedPack = true
            } else {
                // Past the threshold: a new pack after all, from the files again.
                let (pack, solid) = try packs(of: run.files, folder: run.folder, root: run.root, algorithm: run.algorithm)
                run.pack = pack
                run.solid = solid
            }
        }
        if let pack = run.pack, let hash = try pack.finish(root: run.root, keep: pack.size < run.summary.plainBytes && !run.files.isEmpty) {
            run.index.pack = ReleaseIndex.Pack(hash: hash, size: pack.size, files: run.files.count)
            run.summary.packBytes = pack.size
        } else if let reusedPack = run.reusedPack {
            run.index.pack = reusedPack
            run.summary.packBytes = reusedPack.size
            run.summary.reusedPacks = true
        }
        if let reusedSolid = run.reusedSolid {
            run.index.solidPack = reusedSolid
            run.summary.solidPackBytes = reusedSolid.size
        }
        try finishSolidPack(&run)
        for (old, delta) in zip(olds, run.deltas) {
            guard let hash = try delta.finish(root: run.root, keep: !delta.bases.isEmpty) else { continue }
            run.index.deltaPacks.append(ReleaseIndex.DeltaPack(from: ReleaseIndex.tableDigest(old.tableBytes), hash: hash, size: delta.size, bases: delta.bases))
        }
        if let reusedCarried = run.reusedCarried, let earlier = run.earlier {
            run.index.carriedPack = reusedCarried
            run.summary.carriedPack = true
            run.summary.reusedPacks = true
            if !run.index.deltaPacks.contains(where: { $0.from == reusedCarried.from }), let delta = earlier.deltaPacks.first(where: { $0.from == reusedCarried.from }) {
                run.index.deltaPacks.append(delta)
            }
        }
        if run.index.solidPack == nil && run.index.carriedPack == nil {
            // No solid pack kept (a site zstd cannot shrink): the store holds every file whole after all.
            for entry in run.atURI { try writeForm(of: entry, run: &run) }
        } else {
            run.summary.filesAtURI = run.atURI.count
        }
    }

    /// What a first install fetches: the pack's files with the context of those before each,
    /// kept when smaller than the frames pack (or the files).
    private func finishSolidPack(_ run: inout Run) throws(CenariusError) {
        guard let solid = run.solid, !run.files.isEmpty else { return }
        let bytes: [UInt8]
        if let solidMade = run.solidMade { bytes = try solidMade.wait() } else { bytes = try SolidPack.make(solid) }
        guard bytes.count < (run.index.pack?.size ?? run.summary.plainBytes) else { return }
        let hash = StreamingHasher.hash(bytes, run.algorithm)
        try write(bytes, to: ReleaseIndex.packPath(hash), root: run.root)
        run.index.solidPack = ReleaseIndex.Pack(hash: hash, size: Int64(bytes.count), files: run.files.count)
        run.summary.solidPackBytes = Int64(bytes.count)
    }

    /// The index written under the table's hash and its bytes returned, with the table compressed
    /// with this index as its second frame: the store object a head names (`_cenarius/t/<O>.zst`,
    /// which HeadWriter writes), a first install's table and index in one request.
    func finishIndex(_ run: Run) throws(CenariusError) -> Published {
        var index = run.index
        var summary = run.summary
        let table = try Zstd.compress(tableBytes)
        index.tableForm = tableFormBeside && table.count < tableBytes.count
        index.head = head
        index.storedPlain = summary.filesAtURI == 0
        index.plain = index.plain.compacted(for: Set(run.files.map(\.hash)))
        index.formSizes = run.files.map { run.formBytes[$0.hash].flatMap { $0 >= ReleaseIndex.smallestListedForm ? $0 : nil } ?? 0 }
        let indexBytes = index.serialized()
        // Under the table's hash, for devices that predate heads: written once, like every name
        // under `_cenarius/`. A release of a table published before keeps that index there (its
        // objects are still in the store); the head names this one by its own hash.
        let legacyIndex = try Self.writeLegacyIndex(indexBytes, table: index.table, root: run.root)
        let tableForm = table.count < tableBytes.count ? table + (try Zstd.compress(indexBytes)) : nil
        if tableFormBeside, let tableForm {
            try FileSystem.writeAtomically(tableForm, to: FileSystem.join(run.root, ReleaseIndex.tablePath(routesName)), durable: false)
        }
        summary.index = FileSystem.join(run.root, ReleaseIndex.indexPath(table: index.table))
        return Published(summary: summary, index: indexBytes, tableForm: tableForm, legacyIndex: legacyIndex)
    }
}
