import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// A sync's use of the remote's compressed forms and patches (B8, docs/release-bytes.md): kept
/// apart from the sync itself, which only asks for the plan and hands over what is left.
extension Syncer {
    /// Where the device holds a verified copy of a hash: an object in the cache, else a preset file.
    func heldCopies(objects: ObjectStore, preset: RouteTable) -> (ContentHash) -> String? {
        var presetByHash: [ContentHash: URIPath] = [:]
        for entry in preset.entries where presetByHash[entry.hash] == nil { presetByHash[entry.hash] = entry.uri }
        let folder = settings.preset.folder
        return { hash in
            if objects.contains(hash) { return objects.path(hash) }
            return presetByHash[hash].flatMap { folder.file($0) }
        }
    }

    /// The forms plan of a sync's downloads: plain files only when there is nothing to download
    /// or the remote publishes no index the device may use (one request, only for a new table).
    func formPlan(_ downloads: [RouteEntry], table: RouteTable, tableBytes: [UInt8], remote: Remote, downloader: Downloader, signature: TableSignature?,
                  held: (ContentHash) -> String?, cancel: CancelToken?) -> FormPlan {
        let index = downloads.isEmpty ? nil : ReleaseIndexLoader.load(table: tableBytes, remote: remote, downloader: downloader, signature: signature,
                                                                      verifier: settings.tableVerifier, cancel: cancel)
        return FormPlan(downloads: downloads, table: table, index: index, holds: { held($0) != nil })
    }

    /// Gets what it can of `entries` through their forms into the object store; returns the
    /// entries left for plain download.
    func downloadForms(_ entries: [RouteEntry], plan: FormPlan, remote: Remote, downloader: Downloader, objects: ObjectStore,
                       held: @escaping (ContentHash) -> String?, report: inout SyncReport, cancel: CancelToken?) throws(CenariusError) -> [RouteEntry] {
        let products = entries.map { entry in
            FormFetcher.Product(hash: entry.hash, size: entry.size, label: entry.uri.value, destination: objects.temporaryPath(entry.hash))
        }
        guard plan.sources.values.contains(where: { $0.first != .plain }) else { return entries }
        let fetcher = FormFetcher(remote: remote, downloader: downloader, options: settings.transfer, temporary: layout.tmp, basePath: held)
        let outcome = fetcher.fetch(products, plan: plan, cancel: cancel)
        for i in outcome.done.sorted() {
            try objects.adopt(products[i].destination, as: products[i].hash)
        }
        report.downloadedFiles += outcome.done.count
        report.downloadedBytes += outcome.bytesHeld
        report.bytesFetched += outcome.bytesFetched
        report.bytesHeld += outcome.bytesHeld
        report.patchedFiles += outcome.patched
        report.compressedFiles += outcome.compressed
        report.formFallbacks += outcome.fallbacks.count
        return entries.indices.filter { !outcome.done.contains($0) }.map { entries[$0] }
    }
}
