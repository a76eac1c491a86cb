package import RouteSync

/// One way of getting a file: decoded from a form, or the file itself.
package enum FormSource: Sendable, Equatable {
    /// A zstd patch against a file the device holds (`base`).
    case patch(base: ContentHash, form: ReleaseIndex.Form)
    /// The file compressed.
    case zstd(ReleaseIndex.Form)
    /// A member of a pack (a first install): fetched with every other member the plan takes from it.
    case member(ReleaseIndex.Member)
    /// `<remote>/<uri>`, the last source, whose failure fails the sync as it always did.
    case plain

    package var form: ReleaseIndex.Form? {
        switch self {
        case .patch(_, let form), .zstd(let form): form
        case .member, .plain: nil
        }
    }
}

/// Which forms each file to download is fetched through, decided without any I/O (B8): a patch
/// from a base the device holds, else the compressed form, else the plain file; when the files
/// still to fetch that way make up most of a pack (a first install), the pack's members instead,
/// one request for them all. The sources of a file are tried in order (FormPolicy).
package struct FormPlan: Sendable, Equatable {
    /// Per file hash, its sources in order; the last is always `.plain`.
    package var sources: [ContentHash: [FormSource]] = [:]
    /// The pack to fetch, when one is worth it.
    package var pack: ReleaseIndex.Pack?
    /// The objects the chosen patches decode against: garbage collection spares them.
    package var bases: Set<ContentHash> = []

    /// A pack is fetched when the members wanted from it are at least this share of its bytes.
    package static let packShare = 0.75

    /// - Parameters:
    ///   - downloads: the hashes to download (SyncPlan.downloads).
    ///   - holds: whether the device holds a verified copy (cache object or preset file) of a hash.
    package init(downloads: [ContentHash], index: ReleaseIndex?, holds: (ContentHash) -> Bool) {
        guard let index else {
            for hash in downloads { sources[hash] = [.plain] }
            return
        }
        var memberOf: [ContentHash: ReleaseIndex.Member] = [:]
        let pack = index.packs.first
        for member in pack?.members ?? [] where memberOf[member.hash] == nil { memberOf[member.hash] = member }
        var wanted: Int64 = 0
        for hash in downloads {
            let forms = index.files[hash]
            var list: [FormSource] = []
            // The smallest patch first: all of them were kept only because each beat the one before.
            for patch in (forms?.patches ?? []).sorted(by: { $0.form.size < $1.form.size }) where holds(patch.base) {
                list.append(.patch(base: patch.base, form: patch.form))
            }
            if list.isEmpty, let member = memberOf[hash] { wanted += member.length }
            if let zstd = forms?.zstd { list.append(.zstd(zstd)) }
            list.append(.plain)
            sources[hash] = list
        }
        if let pack, pack.form.size > 0, Double(wanted) >= Self.packShare * Double(pack.form.size) {
            self.pack = pack
            for hash in downloads {
                guard let member = memberOf[hash], let list = sources[hash], !Self.startsWithPatch(list) else { continue }
                sources[hash] = [.member(member)] + list
            }
        }
        for list in sources.values {
            for source in list { if case .patch(let base, _) = source { bases.insert(base) } }
        }
    }

    private static func startsWithPatch(_ list: [FormSource]) -> Bool {
        if case .patch = list.first { return true }
        return false
    }
}
