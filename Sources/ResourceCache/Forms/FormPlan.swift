package import RouteSync

/// One way of getting a file: decoded from a form, or the file itself.
package enum FormSource: Sendable, Equatable {
    /// A zstd patch against a file the device holds (`base`).
    case patch(base: ContentHash)
    /// The file compressed.
    case zstd
    /// The pack's frame number `ordinal` (a first install): one request for all the files taken from it.
    case member(Int)
    /// `<remote>/<uri>`, the last source, whose failure fails the sync as it always did.
    case plain

    var isMember: Bool {
        if case .member = self { return true }
        return false
    }
}

/// Which forms each file to download is fetched through, decided without any I/O (B8): a patch
/// from a base the device holds, else the compressed form, else the plain file; when the files
/// still to fetch that way make up most of the site (a first install), the pack's frames
/// instead, one request for them all. The sources of a file are tried in order (FormPolicy).
package struct FormPlan: Sendable, Equatable {
    /// Per file hash, its sources in order; the last is always `.plain`.
    package var sources: [ContentHash: [FormSource]] = [:]
    /// The pack to fetch, when one is worth it, with the table's files in its frame order.
    package var pack: ReleaseIndex.Pack?
    package var packOrder: [RouteEntry] = []
    /// The objects the chosen patches decode against: garbage collection spares them.
    package var bases: Set<ContentHash> = []

    /// A pack is fetched when the files wanted from it are at least this share of its files' bytes.
    package static let packShare = 0.75

    /// - Parameters:
    ///   - downloads: one entry per hash to download (SyncPlan.downloads).
    ///   - table: the table the index belongs to (its distinct hashes are the pack's frames).
    ///   - holds: whether the device holds a verified copy (cache object or preset file) of a hash.
    package init(downloads: [RouteEntry], table: RouteTable, index: ReleaseIndex?, holds: (ContentHash) -> Bool) {
        guard let index else {
            for entry in downloads { sources[entry.hash] = [.plain] }
            return
        }
        var patches: [ContentHash: [ContentHash]] = [:]
        for patch in index.patches { patches[patch.target, default: []].append(patch.base) }
        var unpatched: [RouteEntry] = []
        for entry in downloads {
            var list: [FormSource] = []
            for base in patches[entry.hash] ?? [] where holds(base) {
                list.append(.patch(base: base))
                bases.insert(base)
            }
            if list.isEmpty { unpatched.append(entry) }
            if !index.plain.contains(entry.hash) { list.append(.zstd) }
            list.append(.plain)
            sources[entry.hash] = list
        }
        let order = table.packOrder
        guard let pack = index.pack, pack.files == order.count, !unpatched.isEmpty else { return }
        // Bytes when the table gives every size, else files.
        let sized = order.allSatisfy { $0.size != nil }
        let weight = { (entry: RouteEntry) in sized ? Double(entry.size!) : 1 }
        let wanted = unpatched.reduce(0) { $0 + weight($1) }, total = order.reduce(0) { $0 + weight($1) }
        guard total > 0, wanted >= Self.packShare * total else { return }
        self.pack = pack
        packOrder = order
        let wantedHashes = Set(unpatched.map(\.hash))
        for (ordinal, entry) in order.enumerated() where wantedHashes.contains(entry.hash) {
            sources[entry.hash] = [.member(ordinal)] + (sources[entry.hash] ?? [.plain])
        }
    }
}
