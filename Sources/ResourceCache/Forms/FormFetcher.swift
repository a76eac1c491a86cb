package import RouteSync
package import Transport
import Tracing
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
    /// Where a form that decoded to its file is kept for the LAN's peers (nil: removed with the round).
    package var keep: PeerForms?
    /// Where forms are announced as they download, with `keep`, for peers that take them as they grow.
    package var growing: PeerFetching?
    /// Each file's form's bytes, as the index gives them, for an owner (`keep`): its large forms
    /// come in slices when they weigh enough (SlicedForm.worthIt), whatever their files' sizes.
    package var formBytes: [ContentHash: Int64] = [:]

    package init(remote: Remote, downloader: Downloader, options: TransferOptions, temporary: String, basePath: @escaping @Sendable (ContentHash) -> String?) {
        self.remote = remote
        self.downloader = downloader
        self.options = options
        self.temporary = temporary
        self.basePath = basePath
    }

    private var unpacker: Unpacker { Unpacker(temporary: temporary, maxFileSize: options.maxFileSize, basePath: basePath) }

    package func fetch(_ products: [Product], plan: FormPlan, cancel: CancelToken?) -> Outcome {
        var progress = FormProgress(products: products, plan: plan, policy: policy)
        while !(cancel?.isCancelled ?? false) {
            let pending = progress.pending
            // An owner's share of plain files alone still comes in a round, announced to its peers as it arrives.
            guard !pending.isEmpty || keep != nil && !progress.plainOnly.isEmpty else { break }
            let round = FormRound(self, progress: progress, pending: pending)
            progress.plainAsked = true
            run(round, pending: pending, progress: &progress, cancel: cancel)
        }
        return progress.outcome
    }

    /// One round's downloads, then each file decoded from its form or its pack frame, or moved on.
    private func run(_ round: FormRound, pending: [Int], progress: inout FormProgress, cancel: CancelToken?) {
        let plan = progress.plan
        let packPath = plan.pack.map { ReleaseIndex.packPath($0.hash) }
        // The pack's frames are decoded as its bytes arrive, on a thread of their own. It is not
        // checked against its own hash: every file it gives is checked against the table's.
        let slices = round.members.isEmpty || !round.sliced ? nil : plan.pack.map { pack in
            downloader.sliced(packJob(pack.hash, size: pack.size, policy: policy.packs(options)), cancel: cancel)
        }
        let packFile = slices?.file ?? (round.members.isEmpty ? nil : packPath.flatMap(round.destination(of:)).map {
            GrowingFile(path: $0, cancel: cancel)
        })
        // A span a step of the round (decoding and patching apart from the downloads, issue 59):
        // the pack's frames are decoded while its bytes arrive, so its span overlaps the downloads'.
        let unpackSpan = packFile.map { _ in startSpan("cenarius.forms.unpack") }
        let unpacking = packFile.map { PackUnpacking(unpacker, file: $0, plan: plan, members: round.members, products: progress.products) }
        let early = asTheyArrive(round, pending: pending, progress: progress)
        let large = startSliced(round, progress: progress, cancel: cancel)
        let (results, slicesOutcome, largeOutcomes, wire) = Traced.span("cenarius.forms.download") { span in
            let results = downloader.download(round.downloads, cancel: cancel, finished: early?.listener)
            let slicesOutcome = slices?.download.wait()
            let largeOutcomes = large.map { $0.finish() }
            let wire = downloader.lastBytesOnWire + (slicesOutcome?.wire ?? 0) + largeOutcomes.reduce(0) { $0 + $1.wire }
            span.attributes["cenarius.forms"] = SpanAttribute.int64(Int64(round.downloads.count + (slices == nil ? 0 : 1) + large.count))
            span.attributes["cenarius.bytes.fetched"] = SpanAttribute.int64(wire)
            return (results, slicesOutcome, largeOutcomes, wire)
        }
        let unpacked = unpacking?.finish()
        if let unpackSpan { FormSpans.unpacked(unpacked ?? [:], in: unpackSpan) }
        progress.outcome.bytesFetched += wire
        if let slices { unlink(slices.file.path) }
        let fetched = { (path: String) in round.fetched(path, results: results, slices: slicesOutcome, packPath: packPath) }
        let decodeSpan = round.forms > 0 ? startSpan("cenarius.forms.decode") : nil
        let before = progress.outcome
        var decodedEarly = early?.results() ?? [:]
        settle(round.slicedForms, largeOutcomes.map(\.decoded), decoded: &decodedEarly, progress: &progress)
        for i in pending where !progress.source(i).isMember {
            guard let path = Self.path(progress.source(i), progress.products[i].hash, plan: plan) else { continue }
            if let decoded = decodedEarly[i] { record(i, decoded, progress: &progress) } else { decode(i, from: fetched(path), progress: &progress) }
        }
        if let decodeSpan { FormSpans.decoded(progress.outcome, since: before, in: decodeSpan) }
        if let unpacked, let packPath {
            adopt(unpacked, members: round.members, download: fetched(packPath), progress: &progress)
        }
        round.finish(results, progress: &progress)
    }

    /// What the round's slices gave: a form's decoded file, recorded with the round's other forms'; a
    /// plain file done (one that failed is the caller's, as every plain file of the round is).
    private func settle(_ sliced: [(index: Int, path: String, plain: Bool)], _ outcomes: [Result<Int64, FormsAsTheyArrive.Failed>],
                        decoded: inout [Int: Result<Int64, FormsAsTheyArrive.Failed>], progress: inout FormProgress) {
        for (sliced, outcome) in zip(sliced, outcomes) {
            guard sliced.plain else {
                decoded[sliced.index] = outcome
                continue
            }
            if case .success(let bytes) = outcome { progress.done(sliced.index, bytes: bytes, patched: false, plain: true) }
        }
    }

    /// The round's large forms and plain files of an owner's share, each started in slices on a
    /// thread of its own (SlicedForm); a plain file straight to its destination.
    private func startSliced(_ round: FormRound, progress: FormProgress, cancel: CancelToken?) -> [SlicedForm] {
        round.slicedForms.map { sliced in
            let product = progress.products[sliced.index]
            let form = sliced.plain ? product.destination : temporary + "/" + product.hash.hex + ".sliced-form"
            return SlicedForm(job(sliced.index, progress: progress, path: sliced.path, form: form), url: remote.objectURL(sliced.path), fetcher: self, cancel: cancel)
        }
    }

    /// File `i` decoded from its downloaded form (a patch over a base the device holds, or compressed).
    private func decode(_ i: Int, from fetched: Result<String, CenariusError>, progress: inout FormProgress) {
        let form: String
        switch fetched {
        case .failure(let error): return progress.fail(i, error.message)
        case .success(let path): form = path
        }
        let source = progress.source(i)
        guard let path = Self.path(source, progress.products[i].hash, plan: progress.plan) else { return }
        record(i, Self.decodeForm(job(i, progress: progress, path: path, form: form), basePath: basePath, keep: keep), progress: &progress)
    }

    /// What decoding file `i` from its current form (store path `path`, downloaded to `form`) takes.
    private func job(_ i: Int, progress: FormProgress, path: String, form: String) -> FormsAsTheyArrive.Job {
        FormsAsTheyArrive.Job(index: i, product: progress.products[i], limit: unpacker.limit(progress.products[i].size),
                              source: progress.source(i), form: form, path: path)
    }

    private func record(_ i: Int, _ decoded: Result<Int64, FormsAsTheyArrive.Failed>, progress: inout FormProgress) {
        switch decoded {
        case .success(let bytes): progress.done(i, bytes: bytes, patched: progress.source(i).isPatch)
        case .failure(let why): progress.fail(i, why.reason)
        }
    }

    /// The job's form (store path `job.path`) decoded into its product's destination, and kept for peers with `keep`.
    static func decodeForm(_ job: FormsAsTheyArrive.Job, basePath: (ContentHash) -> String?, keep: PeerForms?) -> Result<Int64, FormsAsTheyArrive.Failed> {
        let (form, path, product, limit) = (job.form, job.path, job.product, job.limit)
        var base: String?
        if case .patch(let hash) = job.source {
            guard let held = basePath(hash) else { return .failure(.init(reason: "patch base \(hash) is gone")) }
            base = held
        }
        let decoding = FormDecoding(source: form, base: base, limit: limit, expected: product.hash)
        do {
            let bytes = try decoding.decode(to: product.destination)
            // Kept before the file is adopted, so that a peer that sees the file sees its form too.
            keep?.keep(form, as: path)
            return .success(bytes)
        } catch {
            return .failure(.init(reason: error.description))
        }
    }

    /// With forms to keep for peers, each of the round's forms decoded as it arrives (FormsAsTheyArrive).
    private func asTheyArrive(_ round: FormRound, pending: [Int], progress: FormProgress) -> FormsAsTheyArrive? {
        guard let keep else { return nil }
        var jobs: [Int: FormsAsTheyArrive.Job] = [:]
        for i in pending where !progress.source(i).isMember {
            guard let path = Self.path(progress.source(i), progress.products[i].hash, plan: progress.plan),
                  let index = round.index(of: path), jobs[index] == nil else { continue }
            jobs[index] = job(i, progress: progress, path: path, form: round.downloads[index].destination)
        }
        guard !jobs.isEmpty else { return nil }
        let basePath = basePath
        return FormsAsTheyArrive(jobs: jobs) { job in
            Self.decodeForm(job, basePath: basePath, keep: keep)
        }
    }

    /// The pack's frames as they were decoded: frames decoded before a download failed are whole
    /// and verified, and kept.
    private func adopt(_ unpacked: PackUnpacking.Results, members: [Int: Int], download: Result<String, CenariusError>, progress: inout FormProgress) {
        for i in members.values {
            switch unpacked[i] {
            case .success(let frame)?:
                progress.done(i, bytes: frame.size, patched: frame.patched)
            case .failure(let why)?:
                if case .failure(let error) = download { progress.fail(i, error.message) } else { progress.fail(i, why.reason) }
            case nil:
                progress.fail(i, "pack frame not reached")
            }
        }
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
    static func path(_ source: FormSource, _ hash: ContentHash, plan: FormPlan) -> String? {
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
    /// The index `seed` uses (a sync takes its index through `ReleaseGate`, from the compressed
    /// table when it came with one). `signed`: the table's verified signature, when a key is configured.
    package static func load(table: [UInt8], remote: Remote, downloader: Downloader, signed: TableSignatureVerifier.Verified?,
                             verifier: TableSignatureVerifier?) -> ReleaseIndex? {
        guard Zstd.isAvailable else { return nil }
        return fetch(table: table, remote: remote, downloader: downloader, cancel: nil).flatMap { check($0, table: table, signed: signed, verifier: verifier) }
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
