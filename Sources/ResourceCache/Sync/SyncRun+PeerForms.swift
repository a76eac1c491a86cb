import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// What a device asks its peers for a file (docs/peers.md): the form its owner took from the origin
/// for its share and kept (PeerForms) — the patch from the release before, or the file compressed —
/// and the file's exact bytes when the owner has no such form. The forms are the plan a device
/// makes for its own share, without packs (a peer keeps none), so asker and owner name the same
/// form; what a form gives is decoded as the origin's are (FormDecoding) and checked against the
/// signed table's hash before it is kept.
struct PeerFormAsk {
    let plan: FormPlan
    /// A verified copy of a patch's base.
    let held: @Sendable (ContentHash) -> String?
    /// Files whose form a peer lacked (404): asked again as their exact bytes.
    var filesOnly: Set<ContentHash> = []

    /// The form to ask for `entry`, or nil for its exact bytes.
    func form(_ entry: RouteEntry) -> (source: FormSource, path: String)? {
        guard !filesOnly.contains(entry.hash), let source = plan.sources[entry.hash]?.first, source != .plain, !source.isMember,
              let path = FormFetcher.path(source, entry.hash, plan: plan) else { return nil }
        return (source, path)
    }

    /// The most bytes a form of a file of `size` bytes can have (zstd's ZSTD_COMPRESSBOUND, which
    /// no frame of that content exceeds, a patch's included): a peer's body is cut off there.
    static func bound(_ size: Int64) -> Int64 {
        size + (size >> 8) + (size < 128 << 10 ? ((128 << 10) - size) >> 11 : 0)
    }
}

extension SyncRun {
    /// The forms to ask peers for `downloads`; nil when the remote publishes no index.
    func peerFormAsk(_ downloads: [RouteEntry], in fetch: ObjectFetch) -> PeerFormAsk? {
        guard let index = fetch.index, !downloads.isEmpty else { return nil }
        let (offer, held) = (fetch.offer, fetch.held)
        let packs = ReleaseIndex.folder + "/pack/"
        let plan = FormPlan(downloads: downloads, table: offer.table, index: index, holding: .init { held($0) != nil },
                            scope: .init(available: { !$0.hasPrefix(packs) }, share: true))
        return PeerFormAsk(plan: plan, held: held)
    }

    /// The download of `entry`'s form from `peer`, cut off at the form's bound.
    func peerFormDownload(_ entry: RouteEntry, path: String, peer: String) -> FileDownload {
        let size = min(entry.size ?? settings.transfer.maxFileSize, settings.transfer.maxFileSize)
        var file = FileDownload(url: peer + "/" + path, destination: layout.tmp + "/" + entry.hash.hex + ".peer-form", expected: entry.hash,
                                label: entry.uri.value, size: PeerFormAsk.bound(size))
        file.checksHash = false
        file.source = peer
        return file
    }

    /// A peer's form decoded into the object store's temporary file for `entry`: its size, or why not.
    /// A device that serves its peers keeps a form that gave its file (`path`, its store name) as an
    /// owner keeps its share's: the others may take it from here when its owner is busy or gone.
    func decodePeerForm(_ file: String, form asked: (source: FormSource, path: String), entry: RouteEntry, ask: PeerFormAsk,
                        into objects: ObjectStore) -> Result<Int64, FormFailure> {
        let (form, source, path) = (file, asked.source, asked.path)
        defer { unlink(form) }
        var base: String?
        if case .patch(let hash) = source {
            guard let held = ask.held(hash) else { return .failure(.local("patch base \(hash) is gone")) }
            base = held
        }
        let limit = min(entry.size ?? settings.transfer.maxFileSize, settings.transfer.maxFileSize)
        let decoding = FormDecoding(source: form, base: base, limit: limit, expected: entry.hash)
        do {
            let size = try decoding.decode(to: objects.temporaryPath(entry.hash))
            // Kept before the file is adopted, as FormFetcher keeps the origin's.
            if settings.peers.me != nil { PeerForms(layout: layout).keep(form, as: path) }
            return .success(size)
        } catch {
            return .failure(error)
        }
    }
}
