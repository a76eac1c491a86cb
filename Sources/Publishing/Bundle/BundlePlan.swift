package import RouteSync

/// What an offline bundle of one channel's release holds (docs/bundles.md): the head, and of the
/// store exactly what a device on one of the `from` tables — or with nothing, a first install —
/// fetches for it, as the device's own forms plan would choose it (FormPlan): the table's patch
/// from its table (unless the head carries it) or the compressed table, then the delta pack from
/// its table, else per file a patch from a file it holds, the compressed file or its plain bytes;
/// a first install the solid pack. Nothing else: not every form, not every patch.
package struct BundlePlan: Sendable {
    package var release: BundleManifest.Release
    /// The head's name and exact bytes.
    package var headKey: String
    package var headBytes: [UInt8]
    /// Store objects, in the order a device asks for them: the table's first, then packs, then files'.
    package var objects: [String]

    /// A base a device may be on: a table's SHA-256 and the file hashes it lists.
    package struct Base: Sendable {
        package var digest: String
        package var hashes: Set<ContentHash>
        package init(digest: String, hashes: Set<ContentHash>) {
            self.digest = digest
            self.hashes = hashes
        }
    }

    package init(head: ReleaseHead, headBytes: [UInt8], headKey: String, parts: StoredRelease.Parts, bases: [Base], firstInstall: Bool) throws(CenariusError) {
        self.headKey = headKey
        self.headBytes = headBytes
        let index = parts.index
        let release = head.release.flatMap { try? ReleaseManifest.parse($0, source: headKey) }?.release
        let others = bases.filter { $0.digest != head.table }
        self.release = BundleManifest.Release(channel: head.channel, head: headKey, version: head.version, release: release, table: head.table,
                                              from: others.map(\.digest), firstInstall: firstInstall)
        var tableObjects: [String] = [], packs: [String] = [], files: [String] = []
        let wholeTable = head.tableForm.map { [ReleaseHead.tableFormPath($0)] }
            ?? [ReleaseHead.tablePath(head.table)] + (head.index.map { [ReleaseHead.indexPath($0)] } ?? [])
        if firstInstall { tableObjects += wholeTable }
        let order = parts.table.packOrder
        for base in others {
            if let patch = head.tablePatches.first(where: { $0.from == base.digest }) {
                if patch.inline == nil { tableObjects.append(ReleaseHead.tablePatchPath(patch.digest)) }
            } else {
                tableObjects += wholeTable
            }
            let wanted = order.filter { !base.hashes.contains($0.hash) }
            if wanted.isEmpty { continue }
            if let delta = index.deltaPacks.first(where: { $0.from == base.digest }), delta.bases.count == wanted.count {
                packs.append(ReleaseIndex.packPath(delta.hash))
                continue
            }
            for entry in wanted { files.append(try Self.form(of: entry.hash, index: index, holding: base.hashes)) }
        }
        if firstInstall {
            if let pack = index.solidPack ?? index.pack, pack.files == order.count {
                packs.append(ReleaseIndex.packPath(pack.hash))
            } else if let carried = index.carriedPack {
                // What a device installing first from the origin fetches: the carried pack, its table, the delta pack from it.
                tableObjects.append(ReleaseHead.tablePath(carried.from))
                packs += [ReleaseIndex.packPath(carried.pack.hash)] + index.deltaPacks.filter { $0.from == carried.from }.map { ReleaseIndex.packPath($0.hash) }
            } else {
                for entry in order { files.append(try Self.form(of: entry.hash, index: index, holding: [])) }
            }
        }
        var seen = Set<String>()
        objects = (tableObjects + packs + files).filter { seen.insert($0).inserted }
    }

    /// A file's cheapest form for a device holding `holding`: a patch from one of them, the
    /// compressed file, or its exact bytes in the store.
    private static func form(of hash: ContentHash, index: ReleaseIndex, holding: Set<ContentHash>) throws(CenariusError) -> String {
        if let patch = index.patches.first(where: { $0.target == hash && holding.contains($0.base) }) { return ReleaseIndex.patchPath(patch) }
        if !index.plain.contains(hash) { return ReleaseIndex.formPath(hash) }
        guard index.storedPlain else {
            throw .integrity("the store holds no bytes of file \(hash.hex) (published before the store kept them): publish the release again, then bundle it")
        }
        return ReleaseIndex.plainPath(hash)
    }
}
