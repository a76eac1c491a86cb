package import RouteSync
package import Transport
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
    package let basePath: @Sendable (ContentHash) -> String?
    package var policy = FormPolicy()

    package init(remote: Remote, downloader: Downloader, options: TransferOptions, temporary: String, basePath: @escaping @Sendable (ContentHash) -> String?) {
        self.remote = remote
        self.downloader = downloader
        self.options = options
        self.temporary = temporary
        self.basePath = basePath
    }

    private var unpacker: Unpacker { Unpacker(temporary: temporary, maxFileSize: options.maxFileSize, basePath: basePath) }

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
        let packPolicy = policy.packs(options)
        while !(cancel?.isCancelled ?? false) {
            let pending = products.indices.filter { !outcome.done.contains($0) && source($0) != .plain }
            guard !pending.isEmpty else { break }
            // This round's downloads: each form once, and the pack once for all its frames.
            var downloads: [FileDownload] = []
            var position: [String: Int] = [:]
            func want(_ path: String, label: String, expected: ContentHash, pack: Bool = false) {
                guard position[path] == nil else { return }
                position[path] = downloads.count
                let name = path.split(separator: "/").last.map(String.init) ?? expected.hex
                var file = FileDownload(url: remote.objectURL(path), destination: temporary + "/" + name + ".form",
                                        expected: expected, label: label)
                // A broken connection resumes the pack by Range rather than sending every file
                // after it through a request of its own.
                file.policy = pack ? packPolicy : formPolicy
                file.checksHash = false
                downloads.append(file)
            }
            var members: [Int: Int] = [:]
            // A large pack comes in slices on connections of its own (prefetched when the head
            // named it); a small one on this downloader's connection, which is open already.
            let sliced = plan.pack.map { downloader.isPrefetching(packJob($0.hash, size: $0.size).url) || $0.size >= SlicedDownload.minSliced } ?? false
            for i in pending {
                guard let path = path(source(i), products[i].hash, plan: plan) else { continue }
                if case .member(let ordinal) = source(i) {
                    members[ordinal] = i
                    if !sliced { want(path, label: "the release pack", expected: plan.pack!.hash, pack: true) }
                } else {
                    want(path, label: products[i].label, expected: products[i].hash)
                }
            }
            // The pack's frames are decoded as its bytes arrive, on a thread of their own. It is
            // not checked against its own hash: every file it gives is checked against the table's.
            let slices = members.isEmpty || !sliced ? nil : plan.pack.map { pack in
                downloader.sliced(packJob(pack.hash, size: pack.size, policy: packPolicy), cancel: cancel)
            }
            let packFile = slices?.file ?? (members.isEmpty ? nil : position[ReleaseIndex.packPath(plan.pack!.hash)].map { at in
                GrowingFile(path: downloads[at].destination, cancel: cancel)
            })
            let unpacking = packFile.map { PackUnpacking(unpacker, file: $0, plan: plan, members: members, products: products) }
            let results = downloader.download(downloads, cancel: cancel)
            let slicesOutcome = slices?.download.wait()
            let unpacked = unpacking?.finish()
            outcome.bytesFetched += downloader.lastBytesOnWire + (slicesOutcome?.wire ?? 0)
            if let slices { unlink(slices.file.path) }
            func fetched(_ path: String) -> Result<String, CenariusError> {
                if let slicesOutcome, let hash = plan.pack?.hash, path == ReleaseIndex.packPath(hash) {
                    return slicesOutcome.failure.map { .failure($0) } ?? .success(path)
                }
                guard let at = position[path] else { return .failure(.internal("form not fetched")) }
                return results[at].map { _ in downloads[at].destination }
            }
            for i in pending {
                let product = products[i]
                let current = source(i)
                if current.isMember { continue }
                guard let path = path(current, product.hash, plan: plan) else { continue }
                switch fetched(path) {
                case .failure(let error):
                    fail(i, error.message)
                case .success(let form):
                    var base: String?
                    if case .patch(let hash) = current {
                        guard let held = basePath(hash) else {
                            fail(i, "patch base \(hash) is gone")
                            continue
                        }
                        base = held
                    }
                    let decoding = FormDecoding(source: form, base: base, limit: unpacker.limit(product.size), expected: product.hash)
                    do {
                        outcome.bytesHeld += try decoding.decode(to: product.destination)
                        outcome.done.insert(i)
                        if case .patch = current { outcome.patched += 1 } else { outcome.compressed += 1 }
                    } catch {
                        fail(i, error.description)
                    }
                }
            }
            if let unpacked, let pack = plan.pack {
                // Frames decoded before a download failed are whole and verified: they are kept.
                let download = fetched(ReleaseIndex.packPath(pack.hash))
                for i in members.values {
                    switch unpacked[i] {
                    case .success(let frame)?:
                        outcome.bytesHeld += frame.size
                        if frame.patched { outcome.patched += 1 } else { outcome.compressed += 1 }
                        outcome.done.insert(i)
                    case .failure(let why)?:
                        if case .failure(let error) = download { fail(i, error.message) } else { fail(i, why.reason) }
                    case nil:
                        fail(i, "pack frame not reached")
                    }
                }
            }
            for file in downloads { unlink(file.destination) }
        }
        return outcome
    }

    /// The download of the pack named `hash`: where a sync's prefetch (Syncer.prefetchPack) put it too.
    package func packJob(_ hash: ContentHash, size: Int64, policy: RetryPolicy? = nil) -> SlicedDownload.Job {
        Self.packJob(remote: remote, temporary: temporary, hash, size: size, policy: policy)
    }

    package static func packJob(remote: Remote, temporary: String, _ hash: ContentHash, size: Int64, policy: RetryPolicy? = nil) -> SlicedDownload.Job {
        SlicedDownload.Job(url: remote.objectURL(ReleaseIndex.packPath(hash)), destination: temporary + "/" + hash.hex + ".pack",
                           size: size, expected: hash, label: "the release pack", policy: policy)
    }

    /// Where a source is on the remote; nil for the plain file.
    private func path(_ source: FormSource, _ hash: ContentHash, plan: FormPlan) -> String? {
        switch source {
        case .patch(let base): ReleaseIndex.patchPath(.init(target: hash, base: base))
        case .zstd: ReleaseIndex.formPath(hash)
        case .member: plan.pack.map { ReleaseIndex.packPath($0.hash) }
        case .plain: nil
        }
    }
}

/// The release index of a table (B8), or nil when the remote has none or none the device may
/// use: a missing, unreadable or malformed index, one for another table, or (with a public key
/// configured) one the table's signature does not cover. Nil costs nothing but the saving.
package enum ReleaseIndexLoader {
    /// - Parameter embedded: the index that came with the compressed table, if it did (no request then).
    /// - Parameter signed: the table's verified signature, when a key is configured.
    package static func load(table: [UInt8], embedded: [UInt8]? = nil, remote: Remote, downloader: Downloader, signed: TableSignatureVerifier.Verified?,
                             verifier: TableSignatureVerifier?, cancel: CancelToken?) -> ReleaseIndex? {
        guard Zstd.isAvailable else { return nil }
        if let embedded, let index = check(embedded, table: table, signed: signed, verifier: verifier) { return index }
        return fetch(table: table, remote: remote, downloader: downloader, cancel: cancel).flatMap { check($0, table: table, signed: signed, verifier: verifier) }
    }

    /// The index under the table's hash at `remote`, unchecked; nil when it cannot be had.
    package static func fetch(table: [UInt8], remote: Remote, downloader: Downloader, cancel: CancelToken?) -> [UInt8]? {
        let url = remote.objectURL(ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(table)))
        guard case .content(let bytes, _)? = try? downloader.fetchDocument(url, validators: nil, maxBytes: 32 << 20, cancel: cancel) else { return nil }
        return bytes
    }

    /// An index a device may use for `table`: it reads, it is this table's, and with a verifier
    /// the table's signature covers it (a device never takes forms a signer did not vouch for).
    package static func check(_ bytes: [UInt8], table: [UInt8], signed: TableSignatureVerifier.Verified?,
                              verifier: TableSignatureVerifier?) -> ReleaseIndex? {
        let digest = ReleaseIndex.tableDigest(table)
        guard let index = try? ReleaseIndex.parse(bytes, source: ReleaseIndex.indexPath(table: digest)), index.table == digest else { return nil }
        if let verifier {
            guard let signed, verifier.covers(index: bytes, table: table, in: signed) else { return nil }
        }
        return index
    }
}
