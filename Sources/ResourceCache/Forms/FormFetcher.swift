package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// Gets files through the forms a FormPlan chose (B8): downloads each round's forms like files
/// (verified against their own hash, resumable by Range, one attempt: FormPolicy), decodes them
/// into the files' destinations (FormDecoding: bounded, hashed against the table's hash), and
/// moves every file whose form failed on to its next source, until only plain downloads are left.
/// Those are the caller's, through the downloader as before.
package struct FormFetcher {
    /// A file to get: its table hash and size, and where the verified file goes.
    package struct Product: Sendable {
        package var hash: ContentHash
        package var size: Int64?
        package var label: String
        package var destination: String
        package init(hash: ContentHash, size: Int64?, label: String, destination: String) {
            self.hash = hash
            self.size = size
            self.label = label
            self.destination = destination
        }
    }

    package struct Outcome: Sendable {
        /// Indexes of the products now at their destination, verified.
        package var done: Set<Int> = []
        package var bytesFetched: Int64 = 0
        package var bytesHeld: Int64 = 0
        package var patched = 0
        package var compressed = 0
        /// One line per form that failed and why (for logs and tests).
        package var fallbacks: [String] = []
    }

    package let remote: Remote
    package let downloader: Downloader
    package let options: TransferOptions
    /// Where forms are downloaded to (inside the cache, or beside the preset for `seed`).
    package let temporary: String
    /// A verified copy of a patch base the device holds, by hash.
    package let basePath: (ContentHash) -> String?
    package var policy = FormPolicy()

    package init(remote: Remote, downloader: Downloader, options: TransferOptions, temporary: String, basePath: @escaping (ContentHash) -> String?) {
        self.remote = remote
        self.downloader = downloader
        self.options = options
        self.temporary = temporary
        self.basePath = basePath
    }

    /// The most a product's output may be: the entry's size when the table gives one, and never
    /// above --max-file-size.
    func limit(_ product: Product) -> Int64 {
        min(product.size ?? options.maxFileSize, options.maxFileSize)
    }

    package func fetch(_ products: [Product], plan: FormPlan, cancel: CancelToken?) -> Outcome {
        var outcome = Outcome()
        var stage = [Int](repeating: 0, count: products.count)
        func source(_ i: Int) -> FormSource { plan.sources[products[i].hash]?[stage[i]] ?? .plain }
        func fail(_ i: Int, _ why: String) {
            let remaining = (plan.sources[products[i].hash]?.count ?? 1) - stage[i] - 1
            outcome.fallbacks.append("\(products[i].label): \(why)")
            if policy.decide(remaining: remaining) == .next { stage[i] += 1 }
        }
        let formPolicy = policy.downloads(options)
        while !(cancel?.isCancelled ?? false) {
            let pending = products.indices.filter { !outcome.done.contains($0) && source($0) != .plain }
            guard !pending.isEmpty else { break }
            // This round's downloads: each form once, and the pack once for all its members.
            var downloads: [FileDownload] = []
            var position: [ContentHash: Int] = [:]
            func want(_ form: ReleaseIndex.Form, path: String, label: String) {
                guard position[form.hash] == nil else { return }
                position[form.hash] = downloads.count
                var file = FileDownload(url: remote.base + "/" + path, destination: temporary + "/" + form.hash.hex + ".form",
                                        expected: form.hash, label: label, size: form.size)
                file.policy = formPolicy
                downloads.append(file)
            }
            for i in pending {
                switch source(i) {
                case .patch(_, let form), .zstd(let form): want(form, path: ReleaseIndex.formPath(form.hash), label: products[i].label)
                case .member: if let pack = plan.pack { want(pack.form, path: ReleaseIndex.packPath(pack.form.hash), label: "release pack") }
                case .plain: break
                }
            }
            let results = downloader.download(downloads, cancel: cancel)
            for case .success(let size) in results { outcome.bytesFetched += size }
            func fetched(_ form: ReleaseIndex.Form) -> Result<String, CenariusError> {
                guard let at = position[form.hash] else { return .failure(.internal("form not fetched")) }
                return results[at].map { _ in downloads[at].destination }
            }
            for i in pending {
                let product = products[i]
                let current = source(i)
                let form: ReleaseIndex.Form
                var decoding: FormDecoding
                switch current {
                case .patch(let base, let patch):
                    guard let basePath = basePath(base) else {
                        fail(i, "patch base \(base) is gone")
                        continue
                    }
                    form = patch
                    decoding = FormDecoding(source: "", base: basePath, limit: limit(product), expected: product.hash)
                case .zstd(let zstd):
                    form = zstd
                    decoding = FormDecoding(source: "", limit: limit(product), expected: product.hash)
                case .member(let member):
                    guard let pack = plan.pack else { fail(i, "no pack"); continue }
                    form = pack.form
                    decoding = FormDecoding(source: "", offset: member.offset, length: member.length, limit: limit(product), expected: product.hash)
                case .plain:
                    continue
                }
                switch fetched(form) {
                case .failure(let error):
                    fail(i, error.message)
                case .success(let path):
                    decoding.source = path
                    do {
                        outcome.bytesHeld += try decoding.decode(to: product.destination)
                        outcome.done.insert(i)
                        if case .patch = current { outcome.patched += 1 } else { outcome.compressed += 1 }
                    } catch {
                        fail(i, error.description)
                    }
                }
            }
            for file in downloads { unlink(file.destination) }
        }
        return outcome
    }
}

/// The release index of a table (B8), or nil when the remote has none or none the device may
/// use: a missing, unreadable or malformed index, one for another table, or (with a public key
/// configured) one the table's signature does not cover. Nil costs nothing but the saving.
package enum ReleaseIndexLoader {
    package static func load(table: [UInt8], remote: Remote, downloader: Downloader, signature: TableSignature?,
                             verifier: TableSignatureVerifier?, cancel: CancelToken?) -> ReleaseIndex? {
        let digest = ReleaseIndex.tableDigest(table)
        let url = remote.base + "/" + ReleaseIndex.indexPath(table: digest)
        guard case .content(let bytes, _)? = try? downloader.fetchDocument(url, validators: nil, maxBytes: 32 << 20, cancel: cancel),
              let index = try? ReleaseIndex.parse(bytes, source: url), index.table == digest else { return nil }
        if let verifier {
            guard let signature, signature.covers(index: bytes, table: table, with: verifier.key) else { return nil }
        }
        return index
    }
}
