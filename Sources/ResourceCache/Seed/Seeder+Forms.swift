import RouteSync
import Transport

/// `seed` through the remote's compressed forms and patches (B8), the same path a sync takes:
/// the preset's current files are the patch bases.
extension Seeder {
    /// The table a seed installs as it was fetched: the remote that gave it, its bytes and parse,
    /// its verified signature (with keys), and the downloader that fetched it and fetches the files.
    struct Fetched {
        let remote: Remote
        let bytes: [UInt8]
        let table: RouteTable
        let signed: TableSignatureVerifier.Verified?
        let downloader: Downloader
    }

    /// Downloads `files` of `fetched`'s table, each through its forms first; one result per file,
    /// in order, as Downloader.download gives them.
    func download(_ files: [FileDownload], of fetched: Fetched, old: RouteTable, report: inout Report,
                  progress: ((TransferProgress) -> Void)?) throws(CenariusError) -> [Result<Int64, CenariusError>] {
        let (table, remote, downloader) = (fetched.table, fetched.remote, fetched.downloader)
        let held = preset.copies(listedIn: old)
        let index = files.isEmpty ? nil : ReleaseIndexLoader.load(table: fetched.bytes, remote: remote, downloader: downloader, signed: fetched.signed,
                                                                  verifier: verifier)
        var byHash: [ContentHash: RouteEntry] = [:]
        for entry in table.entries where byHash[entry.hash] == nil { byHash[entry.hash] = entry }
        let plan = FormPlan(downloads: files.compactMap { byHash[$0.expected] }, table: table, index: index, holding: .init(FormPlan.Held(tableAt: preset.tablePath)) { held($0) != nil })
        var done: [Int: Int64] = [:]
        if plan.sources.values.contains(where: { $0.first != .plain }) {
            try FileSystem.makeDirectories(staging)
            let products = files.map { FormFetcher.Product(hash: $0.expected, size: $0.size, label: $0.label, destination: $0.destination) }
            let outcome = FormFetcher(remote: remote, downloader: downloader, options: transfer, temporary: staging, basePath: held)
                .fetch(products, plan: plan, cancel: nil)
            for i in outcome.done { done[i] = FileSystem.regularFileSize(files[i].destination) ?? 0 }
            report.bytesFetched += outcome.bytesFetched
            report.bytesHeld += outcome.bytesHeld
            report.patchedFiles += outcome.patched
            report.compressedFiles += outcome.compressed
        }
        let plain = files.indices.filter { done[$0] == nil }
        let results = downloader.download(plain.map { files[$0] }, progress: progress)
        var out = files.indices.map { done[$0].map { Result<Int64, CenariusError>.success($0) } ?? .failure(.internal("not run")) }
        for (i, result) in zip(plain, results) {
            out[i] = result
            if case .success(let size) = result { report.bytesHeld += size }
        }
        report.bytesFetched += downloader.lastBytesOnWire
        return out
    }
}
