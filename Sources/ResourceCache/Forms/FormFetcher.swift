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
            // This round's downloads: each form once, and the pack once for all its frames.
            var downloads: [FileDownload] = []
            var position: [String: Int] = [:]
            func want(_ path: String, label: String, expected: ContentHash, pack: Bool) {
                guard position[path] == nil else { return }
                position[path] = downloads.count
                let name = path.split(separator: "/").last.map(String.init) ?? expected.hex
                var file = FileDownload(url: remote.base + "/" + path, destination: temporary + "/" + name + ".form",
                                        expected: expected, label: label)
                // The pack is checked against its own hash, and keeps the retry policy of files: a
                // broken connection resumes it by Range rather than sending every file after it
                // through a request of its own.
                file.policy = pack ? nil : formPolicy
                file.checksHash = pack
                downloads.append(file)
            }
            for i in pending {
                guard let path = path(source(i), products[i].hash, plan: plan) else { continue }
                if source(i).isMember, let pack = plan.pack {
                    // The pack is named in the index by its own hash: its download is checked against it.
                    want(path, label: "the release pack", expected: pack.hash, pack: true)
                } else {
                    want(path, label: products[i].label, expected: products[i].hash, pack: false)
                }
            }
            let results = downloader.download(downloads, cancel: cancel)
            for case .success(let size) in results { outcome.bytesFetched += size }
            func fetched(_ path: String) -> Result<String, CenariusError> {
                guard let at = position[path] else { return .failure(.internal("form not fetched")) }
                return results[at].map { _ in downloads[at].destination }
            }
            var members: [Int: Int] = [:]
            for i in pending {
                let product = products[i]
                let current = source(i)
                if case .member(let ordinal) = current {
                    members[ordinal] = i
                    continue
                }
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
                    let decoding = FormDecoding(source: form, base: base, limit: limit(product), expected: product.hash)
                    do {
                        outcome.bytesHeld += try decoding.decode(to: product.destination)
                        outcome.done.insert(i)
                        if case .patch = current { outcome.patched += 1 } else { outcome.compressed += 1 }
                    } catch {
                        fail(i, error.description)
                    }
                }
            }
            if !members.isEmpty, let pack = plan.pack {
                switch fetched(ReleaseIndex.packPath(pack.hash)) {
                case .failure(let error):
                    for i in members.values { fail(i, error.message) }
                case .success(let file):
                    for (i, result) in unpack(file, plan: plan, members: members, products: products) {
                        switch result {
                        case .success(let frame):
                            outcome.bytesHeld += frame.size
                            if frame.patched { outcome.patched += 1 } else { outcome.compressed += 1 }
                            outcome.done.insert(i)
                        case .failure(let why):
                            fail(i, why.reason)
                        }
                    }
                }
            }
            for file in downloads { unlink(file.destination) }
        }
        return outcome
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

    struct Unpacked: Sendable {
        var size: Int64
        var patched: Bool
    }

    struct Reason: Error {
        var reason: String
    }

    /// Decodes the pack's frames one after another (each frame's end is where the next starts),
    /// keeping those `members` (frame → product) asks for. A frame that fails leaves it and every
    /// frame after it to their next source. One result per member.
    private func unpack(_ file: String, plan: FormPlan, members: [Int: Int], products: [Product]) -> [Int: Result<Unpacked, Reason>] {
        let scratch = temporary + "/skipped-frame"
        defer { unlink(scratch) }
        var results: [Int: Result<Unpacked, Reason>] = [:]
        func failAll(from ordinal: Int, _ why: String) {
            for (later, i) in members where later >= ordinal { results[i] = .failure(Reason(reason: "pack frame \(later): \(why)")) }
        }
        var offset: Int64 = 0
        let last = members.keys.max() ?? -1
        for (ordinal, (entry, base)) in plan.packFrames.enumerated() where ordinal <= last {
            let product = members[ordinal].map { products[$0] }
            var basePath: String?
            if let base {
                basePath = self.basePath(base)
                guard basePath != nil else {
                    failAll(from: ordinal, "patch base \(base) is gone")
                    return results
                }
            }
            let decoding = FormDecoding(source: file, offset: offset, framesFollow: true, base: basePath,
                                        limit: product.map(limit) ?? min(entry.size ?? options.maxFileSize, options.maxFileSize), expected: entry.hash)
            do {
                let (size, end) = try decoding.decodeFrame(to: product?.destination ?? scratch)
                offset = end
                if let i = members[ordinal] { results[i] = .success(Unpacked(size: size, patched: base != nil)) }
            } catch {
                failAll(from: ordinal, error.description)
                return results
            }
        }
        return results
    }
}

/// The release index of a table (B8), or nil when the remote has none or none the device may
/// use: a missing, unreadable or malformed index, one for another table, or (with a public key
/// configured) one the table's signature does not cover. Nil costs nothing but the saving.
package enum ReleaseIndexLoader {
    /// - Parameter embedded: the index that came with the compressed table, if it did (no request then).
    /// - Parameter sidecar: the verified signature sidecar of the table, when a key is configured.
    package static func load(table: [UInt8], embedded: [UInt8]? = nil, remote: Remote, downloader: Downloader, sidecar: [UInt8]?,
                             verifier: TableSignatureVerifier?, cancel: CancelToken?) -> ReleaseIndex? {
        guard Zstd.isAvailable else { return nil }
        let digest = ReleaseIndex.tableDigest(table)
        let url = remote.base + "/" + ReleaseIndex.indexPath(table: digest)
        func usable(_ bytes: [UInt8]) -> ReleaseIndex? {
            guard let index = try? ReleaseIndex.parse(bytes, source: url), index.table == digest else { return nil }
            if let verifier {
                guard let sidecar, let signature = try? TableSignature.parse(sidecar, source: url),
                      signature.formsCover(index: bytes, table: table, withAnyOf: verifier.keys) else { return nil }
            }
            return index
        }
        if let embedded, let index = usable(embedded) { return index }
        guard case .content(let bytes, _)? = try? downloader.fetchDocument(url, validators: nil, maxBytes: 32 << 20, cancel: cancel) else { return nil }
        return usable(bytes)
    }
}
