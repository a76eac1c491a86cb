import RouteSync
import Transport

extension SyncRun {
    /// A first install of a release that carries an earlier table's solid pack instead of a new
    /// one (docs/release-bytes.md): that table from the store, then the files of its pack that
    /// this release has or that the delta pack from that table patches from, then what is left
    /// planned as for a device that holds that table (the delta pack, one request). Nil when that
    /// table cannot be had: the plan stays as it was (the compressed forms, file by file).
    func carriedInstall(_ downloads: [RouteEntry], carried: ReleaseIndex.CarriedPack, in fetch: ObjectFetch,
                        report: inout SyncReport) throws(CenariusError) -> (downloads: [RouteEntry], plan: FormPlan)? {
        guard let index = fetch.index else { return nil }
        let (table, held) = (fetch.offer.table, fetch.held)
        let url = remote.objectURL(ReleaseHead.tablePath(carried.from))
        guard case .content(let bytes, _)? = try? downloader.fetchDocument(url, validators: nil, maxBytes: 64 << 20, cancel: cancel),
              ReleaseIndex.tableDigest(bytes) == carried.from, let earlier = try? RouteTable.parse(bytes, source: url) else { return nil }
        let delta = index.deltaPacks.first { $0.from == carried.from }
        let wanted = Set(downloads.map(\.hash)).union(delta?.bases.compactMap { $0 } ?? [])
        let entries = earlier.packOrder.filter { wanted.contains($0.hash) && held($0.hash) == nil }
        // What the pack does not give goes on below, to the delta pack or the file's own forms.
        _ = try downloadForms(entries, plan: FormPlan(carried: carried, table: earlier, wanted: wanted), in: fetch, report: &report)
        let remaining = downloads.filter { held($0.hash) == nil }
        let listing = settings.storeListing
        let plan = FormPlan(downloads: remaining, table: table, index: index, holding: .init(FormPlan.Held(digest: carried.from, hashes: Set(earlier.entries.map(\.hash)))) { held($0) != nil },
                            scope: .init(available: listing.map { listing in { listing.contains($0) } }))
        return (remaining, plan)
    }
}
