import RouteSync
import Tracing
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// Where each file of a `FormFetcher.fetch` stands among the forms its plan offers (patch,
/// compressed, pack member, then plain), and what the fetch has done so far.
struct FormProgress {
    let products: [FormFetcher.Product]
    let plan: FormPlan
    let policy: FormPolicy
    private var stage: [Int]
    var outcome = FormFetcher.Outcome()

    init(products: [FormFetcher.Product], plan: FormPlan, policy: FormPolicy) {
        self.products = products
        self.plan = plan
        self.policy = policy
        stage = [Int](repeating: 0, count: products.count)
    }

    /// The form file `i` is fetched through now.
    func source(_ i: Int) -> FormSource { plan.sources[products[i].hash]?[stage[i]] ?? .plain }

    /// The files not yet at their destination whose source is still a form.
    var pending: [Int] { products.indices.filter { !outcome.done.contains($0) && source($0) != .plain } }

    /// Files with no form whose exact bytes the store holds: an owner takes them in its first round,
    /// beside its forms, rather than once they are all in (B11: a release's last objects were an
    /// owner's few plain files, and a first install's a 429 kB image), until `plainAsked`.
    var plainOnly: [Int] {
        plainAsked ? [] : products.indices.filter { plan.sources[products[$0].hash] ?? [.plain] == [.plain] && plan.storedPlain.contains(products[$0].hash) }
    }
    var plainAsked = false

    /// Form `i` failed: said in the fallbacks, and the file moved on to its next source.
    mutating func fail(_ i: Int, _ why: String) {
        let remaining = (plan.sources[products[i].hash]?.count ?? 1) - stage[i] - 1
        outcome.fallbacks.append("\(products[i].label): \(why)")
        if policy.decide(remaining: remaining) == .next { stage[i] += 1 }
    }

    /// File `i` is at its destination, verified: `bytes` of it, from a patch or a compressed form,
    /// or (`plain`) its exact bytes.
    mutating func done(_ i: Int, bytes: Int64, patched: Bool, plain: Bool = false) {
        outcome.bytesHeld += bytes
        outcome.done.insert(i)
        if plain { return }
        if patched { outcome.patched += 1 } else { outcome.compressed += 1 }
    }
}

/// One round of a fetch: each pending file's current form downloaded once, and the pack once for
/// all the frames asked of it.
struct FormRound {
    private(set) var downloads: [FileDownload] = []
    private var position: [String: Int] = [:]
    /// Pack frames asked for: the frame's ordinal to the file's index.
    private(set) var members: [Int: Int] = [:]
    /// Whether the pack comes in slices on connections of its own rather than as one download.
    let sliced: Bool
    /// Files fetched as their exact bytes (FormProgress.plainOnly): download index to file index.
    private(set) var plain: [Int: Int] = [:]
    /// An owner's large forms and plain files, each fetched in slices beside the downloads
    /// (SlicedForm): the file's index in the fetch, the store path, and whether it is the file's
    /// exact bytes (checked against its hash) rather than a form to decode.
    private(set) var slicedForms: [(index: Int, path: String, plain: Bool)] = []

    init(_ fetcher: FormFetcher, progress: FormProgress, pending: [Int]) {
        let plan = progress.plan
        // A large pack comes in slices on connections of its own (prefetched when the head
        // named it); a small one on this downloader's connection, which is open already.
        sliced = plan.pack.map {
            fetcher.downloader.isPrefetching(fetcher.packJob($0.hash, size: $0.size).url) || $0.size >= SlicedDownload.minSliced
        } ?? false
        let formPolicy = progress.policy.downloads(fetcher.options)
        let packPolicy = progress.policy.packs(fetcher.options)
        // An owner that keeps its forms for its peers takes them in the order they ask for them
        // (ShareOrder, by the file's signed size, the form's own being unknown): what they ask for
        // is then whole here or arriving, which they take as it arrives (docs/peers.md).
        var ordered = pending
        if fetcher.keep != nil {
            let wanted = pending + progress.plainOnly
            ordered = ShareOrder.indices(wanted.map { progress.products[$0].size }).map { wanted[$0] }
        }
        for i in ordered {
            let product = progress.products[i]
            guard let path = FormFetcher.path(progress.source(i), product.hash, plan: plan) else {
                wantPlain(i, product, fetcher, policy: formPolicy)
                continue
            }
            if !progress.source(i).isMember, slices(path, bytes: fetcher.formBytes[product.hash], file: product.size, fetcher) {
                slicedForms.append((i, path, false))
            } else if case .member(let ordinal) = progress.source(i), let pack = plan.pack {
                members[ordinal] = i
                if !sliced { want(path, fetcher, (label: "the release pack", hash: pack.hash, grows: false), policy: packPolicy) }
            } else {
                want(path, fetcher, (product.label, product.hash, grows: fetcher.keep != nil), policy: formPolicy)
            }
        }
    }

    /// `what.grows`: a form kept for peers, which they take as it arrives.
    private mutating func want(_ path: String, _ fetcher: FormFetcher, _ what: (label: String, hash: ContentHash, grows: Bool),
                               policy: RetryPolicy) {
        let (label, expected, grows) = what
        guard position[path] == nil else { return }
        position[path] = downloads.count
        let name = path.split(separator: "/").last.map(String.init) ?? expected.hex
        var file = FileDownload(url: fetcher.remote.objectURL(path), destination: fetcher.temporary + "/" + name + ".form",
                                expected: expected, label: label)
        // A broken connection resumes the pack by Range rather than sending every file after it
        // through a request of its own.
        file.policy = policy
        file.checksHash = false
        if grows { Self.announce(&file, as: name, to: fetcher.growing) }
        downloads.append(file)
    }

    /// Whether an owner's form (or plain file) at `path` comes in slices (SlicedForm.worthIt), while
    /// the round has room for another. Slices are for a link (an http(s) remote); a bundle's file is read as it is.
    private func slices(_ path: String, bytes: Int64?, file: Int64?, _ fetcher: FormFetcher) -> Bool {
        fetcher.keep != nil && slicedForms.count < SlicedForm.perRound && SlicedForm.worthIt(form: bytes, file: file)
            && Remote.authority(of: fetcher.remote.objectURL(path)) != nil
    }

    /// File `i`'s exact bytes from the store (FormProgress.plainOnly), which its peers take as it
    /// arrives, as they take a form (announced by its hash: no form's name is one); in slices when
    /// it is large (B11: an owner's 429 kB picture, one flow among a hundred, was a first install's
    /// last object, at 5.8 s).
    private mutating func wantPlain(_ i: Int, _ product: FormFetcher.Product, _ fetcher: FormFetcher, policy: RetryPolicy) {
        let path = ReleaseIndex.plainPath(product.hash)
        if slices(path, bytes: product.size, file: product.size, fetcher) { return slicedForms.append((i, path, true)) }
        plain[downloads.count] = i
        // No size: the round's order is its peers' (ShareOrder), and a download with one would go
        // after every form of the round (FileQueue puts sized files in size order, unsized first):
        // B11's owners fetched their 85-byte files last, four seconds after their peers asked.
        var file = FileDownload(url: fetcher.remote.objectURL(path), destination: product.destination,
                                expected: product.hash, label: product.label)
        file.policy = policy
        Self.announce(&file, as: product.hash.hex, to: fetcher.growing)
        downloads.append(file)
    }

    /// `file` written as it arrives and announced to the LAN's peers by `name` (docs/peers.md), when this device serves them.
    private static func announce(_ file: inout FileDownload, as name: String, to growing: PeerFetching?) {
        guard let growing else { return }
        let arriving = GrowingFile(path: file.destination)
        file.growing = arriving
        growing.grows(name, in: arriving)
    }

    /// Once the round's downloads and decoding have ended: its plain files that arrived are done (one
    /// that failed is the caller's, as every plain file used to be), its forms' files removed.
    func finish(_ results: [Result<Int64, CenariusError>], progress: inout FormProgress) {
        for (download, i) in plain {
            if case .success(let bytes) = results[download] { progress.done(i, bytes: bytes, patched: false, plain: true) }
        }
        for (index, file) in downloads.enumerated() where plain[index] == nil { unlink(file.destination) }
    }

    /// Forms downloaded on their own, the pack and plain files apart.
    var forms: Int { downloads.count - plain.count - (members.isEmpty || sliced ? 0 : 1) }

    /// The index of `path`'s download among the round's.
    func index(of path: String) -> Int? { position[path] }

    /// Where the download of `path` went, once the round's downloads ended.
    func destination(of path: String) -> String? { position[path].map { downloads[$0].destination } }

    /// What became of the download of `path`: the local file, or why there is none.
    func fetched(_ path: String, results: [Result<Int64, CenariusError>], slices: (failure: CenariusError?, wire: Int64)?,
                 packPath: String?) -> Result<String, CenariusError> {
        if let slices, path == packPath { return slices.failure.map { .failure($0) } ?? .success(path) }
        guard let at = position[path] else { return .failure(.internal("form not fetched")) }
        return results[at].map { _ in downloads[at].destination }
    }
}

/// The attributes of a round's unpack and decode spans (docs/telemetry.md), each then ended.
enum FormSpans {
    static func unpacked(_ unpacked: PackUnpacking.Results, in span: any Span) {
        let frames = unpacked.values.compactMap { if case .success(let frame) = $0 { frame } else { nil } }
        span.attributes["cenarius.files"] = SpanAttribute.int64(Int64(frames.count))
        span.attributes["cenarius.files.patched"] = SpanAttribute.int64(Int64(frames.filter(\.patched).count))
        span.attributes["cenarius.forms.fallbacks"] = SpanAttribute.int64(Int64(unpacked.count - frames.count))
        span.end()
    }

    static func decoded(_ outcome: FormFetcher.Outcome, since before: FormFetcher.Outcome, in span: any Span) {
        span.attributes["cenarius.files.patched"] = SpanAttribute.int64(Int64(outcome.patched - before.patched))
        span.attributes["cenarius.files.compressed"] = SpanAttribute.int64(Int64(outcome.compressed - before.compressed))
        span.attributes["cenarius.forms.fallbacks"] = SpanAttribute.int64(Int64(outcome.fallbacks.count - before.fallbacks.count))
        span.end()
    }
}
