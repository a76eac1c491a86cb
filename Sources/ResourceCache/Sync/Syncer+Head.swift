import RouteSync
import Transport

/// The head path of the offer (docs/remote-layout.md): a device that knows the remote publishes a
/// head polls it instead of the table, conditionally, and fetches what it names from the store,
/// where every name is immutable. Whatever goes wrong with the head itself — gone, garbage, older
/// than one seen, naming an object that is missing or not what its name says, a signature that
/// does not hold — sends the device back to the table in the same sync, and the head is forgotten
/// until a release index names it again: a device is never held by a head where the table path
/// would move on.
extension Syncer {
    /// nil: the table path decides this sync.
    func offerFromHead(_ poll: Poll, state: HeadState, downloader: Downloader, attempt: inout TableAttempt,
                       cancel: CancelToken?) throws(CenariusError) -> OfferStep? {
        let remote = poll.remote
        let store = heads
        let document: Document
        warmForPack(poll, state: state, downloader: downloader, cancel: cancel)
        do {
            document = try downloader.fetchDocument(remote.headURL, validators: state.text == nil ? nil : state.validators,
                                                    maxBytes: Int64(ReleaseHead.maxBytes), headers: poll.headers, encoded: false, cancel: cancel)
            effect(.lastPoll)
            LastPoll.record(downloader.lastDocument, layout: layout)
        } catch {
            // What the table would meet too (no connection, a proxy's 407, a 429) fails the sync as
            // it would; a head that is gone or refused sends the device back to the table.
            // A channel has no table path to fall back to: its head is its only word.
            guard error.isThisFile, !(cancel?.isCancelled ?? false), !remote.headOnly else { throw error }
            // A first install's question, answered no: not asked again until an index names a head.
            if state.text == nil, error.isMissingRemoteFile || [403, 404, 410].contains(error.httpStatus ?? 0) {
                store.rememberAbsent(remote)
            } else {
                store.forget(remote)
            }
            return nil
        }
        var next = state
        let text: [UInt8]
        switch document {
        case .notModified:
            guard let stored = state.text else {
                store.forget(remote)
                if remote.headOnly { throw .remote("\(remote.headURL) answered 304 Not Modified to a request without validators") }
                return nil
            }
            text = Array(stored.utf8)
        case .content(let body, let received):
            text = body
            next.etag = received.etag
            next.lastModified = received.lastModified
            next.text = String(decoding: body, as: UTF8.self)
        }
        guard let head = try? ReleaseHead.parse(text, source: remote.headURL), head.channel == remote.channel else {
            if remote.headOnly { throw .integrity("\(remote.headURL) is not a head of channel \(remote.channel) this version reads") }
            store.forget(remote)
            return nil
        }
        // Older than a head seen already: a replay, or an edge that has not caught up. The table
        // decides; a channel's device waits for the edge to catch up.
        guard head.version >= state.version else {
            guard remote.headOnly else { return nil }
            return .ended(poll.ended(.notModified, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, self))
        }
        // The table in force's SHA-256, as its stage recorded it; read and hashed only when a
        // cache written before has none. Its bytes are read only when the head names another
        // table (a patch starts from them): an unchanged poll of a 20,000-entry table reads none.
        let recorded = poll.currentMeta?.tableSHA256
        func tableInForce() -> (bytes: [UInt8], digest: String)? {
            poll.current.flatMap { try? FileSystem.readFile($0.tablePath) }.map { (bytes: $0, digest: recorded ?? ReleaseIndex.tableDigest($0)) }
        }
        let unrecorded = recorded == nil ? tableInForce() : nil
        let current = recorded ?? unrecorded?.digest
        if head.table == current {
            next.version = max(state.version, head.version)
            // An unchanged poll rewrites nothing.
            if next != state { store.write(next) }
            // Nothing new, unless the table in force was signed again (a later expiry): that is checked and recorded.
            let resigned = settings.tableVerifier != nil && head.version > (poll.currentMeta?.signedVersion ?? .max)
            if case .content = document, resigned {} else {
                let outcome: SyncReport.Outcome = if case .notModified = document { .notModified } else { .unchanged }
                return .ended(poll.ended(outcome, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, self))
            }
        }
        // The release this device rolled back from (held-back holds its table's SHA-256, which
        // the head names): nothing is fetched for it, poll after poll.
        if let held = ReleaseStore(layout: layout).read().heldBack, held == head.table {
            next.version = max(state.version, head.version)
            if next != state { store.write(next) }
            return .ended(poll.ended(.heldBack, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, self))
        }
        prefetchPack(head, current: current, poll: poll, downloader: downloader, cancel: cancel)
        let fetched: (table: [UInt8], index: [UInt8]?)
        do {
            fetched = try headObjects(head, pending: poll.pending?.table, current: unrecorded ?? tableInForce(), remote: remote,
                                      downloader: downloader, cancel: cancel)
        } catch {
            guard error.code == .integrity || error.isThisFile, !(cancel?.isCancelled ?? false), !remote.headOnly else { throw error }
            store.forget(remote)
            return nil
        }
        // Like a compressed table's: what the head gave is not the remote's word until it is
        // checked, and a refusal is not a refused release, since the table itself is asked next.
        var checking = attempt
        checking.tableFromForm = !remote.headOnly
        do {
            let step = try checked(poll, bytes: fetched.table, validators: next.validators ?? Validators(),
                                   source: .head(head, index: fetched.index), downloader: downloader, attempt: checking, cancel: cancel)
            next.version = max(state.version, head.version)
            store.write(next)
            return step
        } catch where error.code == .integrity && !(cancel?.isCancelled ?? false) && !remote.headOnly {
            store.forget(remote)
            return nil
        }
    }

    /// The table and the index a head names, each checked against its hash: the table from the
    /// release still pending or the generation in force when it is that one, else from the store:
    /// as a patch from the table in force when the head names one (table and index in a few
    /// hundred bytes), else compressed with the index as its second frame, else whole.
    private func headObjects(_ head: ReleaseHead, pending: [UInt8]?, current: (bytes: [UInt8], digest: String)?, remote: Remote, downloader: Downloader,
                             cancel: CancelToken?) throws(CenariusError) -> (table: [UInt8], index: [UInt8]?) {
        func object(_ relative: String, digest: String, size: Int64) throws(CenariusError) -> [UInt8] {
            let url = remote.objectURL(relative)
            guard case .content(let body, _) = try downloader.fetchDocument(url, validators: nil, maxBytes: min(size, Int64(RouteTable.maxBytes)), encoded: false, cancel: cancel),
                  ReleaseIndex.tableDigest(body) == digest else {
                throw .integrity("\(url), which \(remote.headURL) names, is not what its name says")
            }
            return body
        }
        var table = current?.digest == head.table ? current?.bytes : pending.flatMap { ReleaseIndex.tableDigest($0) == head.table ? $0 : nil }
        var index: [UInt8]?
        if table == nil, let current, Zstd.isAvailable, let patched = patched(head, from: current, remote: remote, downloader: downloader, cancel: cancel) {
            (table, index) = patched
        }
        if table == nil, let form = head.tableForm, let size = head.tableFormSize, Zstd.isAvailable {
            let bytes = try object(ReleaseHead.tableFormPath(form), digest: form, size: size)
            let frames = try? Zstd.decompressFrames(bytes, limit: RouteTable.maxBytes + (32 << 20))
            guard let first = frames?.first, ReleaseIndex.tableDigest(first) == head.table else {
                throw .integrity("\(remote.objectURL(ReleaseHead.tableFormPath(form))) is not the table \(remote.headURL) names")
            }
            table = first
            if let second = frames?.dropFirst().first, ReleaseIndex.tableDigest(second) == head.index { index = second }
        }
        let bytes: [UInt8]
        if let table { bytes = table } else { bytes = try object(ReleaseHead.tablePath(head.table), digest: head.table, size: head.tableSize) }
        if index == nil, let digest = head.index {
            // Small, and the signature is over it: had whole so that it can be checked.
            index = try object(ReleaseHead.indexPath(digest), digest: digest, size: 32 << 20)
        }
        return (bytes, index)
    }

    /// The table and index from the head's patch whose base is `current`; nil when it names none,
    /// or the patch is missing or does not decode to what the head names: the compressed table
    /// is fetched then, as by a device that holds another table.
    private func patched(_ head: ReleaseHead, from current: (bytes: [UInt8], digest: String), remote: Remote, downloader: Downloader,
                         cancel: CancelToken?) -> (table: [UInt8], index: [UInt8]?)? {
        guard let patch = head.tablePatches.first(where: { $0.from == current.digest }) else { return nil }
        let url = remote.objectURL(ReleaseHead.tablePatchPath(patch.digest))
        let limit = RouteTable.maxBytes + (32 << 20)
        let body = patch.inline.flatMap { ReleaseIndex.tableDigest($0) == patch.digest ? $0 : nil } ?? {
            guard patch.size <= Int64(limit),
                  case .content(let body, _)? = try? downloader.fetchDocument(url, validators: nil, maxBytes: patch.size, encoded: false, cancel: cancel) else { return nil }
            return body
        }()
        guard let body, ReleaseIndex.tableDigest(body) == patch.digest,
              let decoded = try? Zstd.decompress(body, prefix: current.bytes, limit: limit),
              head.tableSize <= Int64(decoded.count) else { return nil }
        let table = Array(decoded[..<Int(head.tableSize)])
        let rest = Array(decoded[Int(head.tableSize)...])
        guard ReleaseIndex.tableDigest(table) == head.table else { return nil }
        if let index = head.index { return ReleaseIndex.tableDigest(rest) == index ? (table, rest) : (table, nil) }
        return rest.isEmpty ? (table, nil) : nil
    }

    /// The head's signature when keys are configured (G8): over the table, the manifest, the index
    /// and the channel, with the trust this device's rotations left, its version the head's.
    func verifyHead(_ head: ReleaseHead, table: [UInt8], index: [UInt8]?, remote: Remote,
                    inForce: Int64?) throws(CenariusError) -> TableSignatureVerifier.Verified? {
        guard let verifier = settings.tableVerifier else { return nil }
        guard let signature = head.signature else { throw .integrity("\(remote.headURL) is not signed but a public key is configured") }
        let trust = try TrustStore(layout: layout).read()
        let verified = try verifier.check(sidecar: signature, files: head.signedFiles(table: table, index: index), source: remote.headURL,
                                          sidecarSource: remote.headURL, inForce: inForce, trust: trust, now: settings.rollout.now())
        guard verified.version == head.version else {
            throw .integrity("\(remote.headURL) says version \(head.version) but is signed as version \(verified.version)")
        }
        if verified.trust != trust {
            effect(.trust)
            try TrustStore(layout: layout).write(verified.trust)
        }
        return verified
    }

    /// The table in force re-signed (a later expiry, say) arrives as a new head over the same
    /// table: its signature is checked and recorded, as `refreshSignature` does for a sidecar.
    func refreshHeadSignature(_ head: ReleaseHead, table: [UInt8], index: [UInt8]?, of current: Generation, meta: GenerationMeta, remote: Remote) {
        guard head.version > (meta.signedVersion ?? 0),
              let verified = try? verifyHead(head, table: table, index: index, remote: remote, inForce: meta.signedVersion) else { return }
        var meta = meta
        meta.signedVersion = verified.version
        meta.signedAt = verified.signedAt
        meta.signatureExpires = verified.expires
        effect(.metaRefreshed)
        try? FileSystem.writeAtomically(meta.encoded(), to: current.metaPath)
    }
}
