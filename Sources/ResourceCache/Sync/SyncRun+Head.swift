import ReportHeader
import Tracing
import RouteSync
import Transport

/// The head path of the offer (docs/remote-layout.md): a device that knows the remote publishes a
/// head polls it instead of the table, conditionally, and fetches what it names from the store,
/// where every name is immutable. Whatever goes wrong with the head itself — gone, garbage, older
/// than one seen, naming an object that is missing or not what its name says, a signature that
/// does not hold — sends the device back to the table in the same sync, and the head is forgotten
/// until a release index names it again: a device is never held by a head where the table path
/// would move on.
extension SyncRun {
    /// A head as polled: how it was answered, what it says, and the record to keep of it.
    struct PolledHead {
        var document: Document
        var head: ReleaseHead
        var next: HeadState
    }

    /// nil: the table path decides this sync.
    func offerFromHead(_ poll: Poll, state: HeadState) throws(CenariusError) -> OfferStep? {
        guard var polled = try Traced.span("cenarius.head", { _ throws(CenariusError) in try pollHead(poll, state: state) }) else { return nil }
        let head = polled.head
        // Older than a head seen already: a replay, or an edge that has not caught up. The table
        // decides; a channel's device waits for the edge to catch up.
        guard head.version >= state.version else {
            guard remote.headOnly else { return nil }
            return .ended(poll.ended(.notModified, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, syncer))
        }
        // The table in force's SHA-256, as its stage recorded it; read and hashed only when a
        // cache written before has none. Its bytes are read only when the head names another
        // table (a patch starts from them): an unchanged poll of a 20,000-entry table reads none.
        let recorded = poll.currentMeta?.tableSHA256
        let unrecorded = recorded == nil ? poll.tableInForce() : nil
        let current = recorded ?? unrecorded?.digest
        if head.table == current {
            // Nothing new, unless the table in force was signed again (a later expiry): with keys, a
            // head above the version seen is checked before its version or expiry is recorded (G8).
            guard gate.signs, case .content = polled.document, head.version > state.version else {
                gate.see(head, verified: nil, in: &polled.next)
                // An unchanged poll rewrites nothing.
                if polled.next != state { heads.write(polled.next) }
                let outcome: SyncReport.Outcome = if case .notModified = polled.document { .notModified } else { .unchanged }
                return .ended(poll.ended(outcome, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, syncer))
            }
        }
        // The release this device rolled back from (held-back holds its table's SHA-256, which
        // the head names): nothing is fetched for it, poll after poll, and nothing is verified. So
        // with keys, a head over it above the version seen is not recorded at all (it is asked
        // for whole again), and without them its version is taken as it is.
        if gate.holdsBack(table: head.table) {
            gate.see(head, verified: nil, in: &polled.next)
            if polled.next != state, !gate.signs || head.version <= state.version { heads.write(polled.next) }
            return .ended(poll.ended(.heldBack, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, syncer))
        }
        return try offerRelease(polled, poll: poll, current: current, inForce: unrecorded)
    }

    /// The head, asked for conditionally; nil (and the head forgotten, or remembered as absent)
    /// when it is gone, refused or not a head of this channel: the table decides then.
    private func pollHead(_ poll: Poll, state: HeadState) throws(CenariusError) -> PolledHead? {
        let document: Document
        warmForPack(poll, state: state)
        do {
            // The report in the URL, for logs without headers: the head's URL is still the one
            // recorded and checked everywhere else.
            let url = poll.reportQuery.map { FleetReport.url(remote.headURL, adding: $0) } ?? remote.headURL
            document = try downloader.fetchDocument(url, validators: state.text == nil ? nil : state.validators,
                                                    maxBytes: Int64(ReleaseHead.maxBytes), options: .init(headers: poll.headers, encoded: false), cancel: cancel)
            if poll.reportQuery != nil { DeviceReport.sentQuery(settings: settings) }
            effect(.lastPoll)
            LastPoll.record(downloader.lastDocument, layout: layout)
        } catch {
            // An answer, even a refusal, was logged where the poll arrived: the window starts.
            if poll.reportQuery != nil, error.httpStatus != nil { DeviceReport.sentQuery(settings: settings) }
            // What the table would meet too (no connection, a proxy's 407, a 429) fails the sync as
            // it would; a head that is gone or refused sends the device back to the table.
            // A channel has no table path to fall back to: its head is its only word.
            guard error.isThisFile, !isCancelled, !remote.headOnly else { throw error }
            // A first install's question, answered no: not asked again until an index names a head.
            if state.text == nil, error.isMissingRemoteFile || [403, 404, 410].contains(error.httpStatus ?? 0) {
                heads.rememberAbsent(remote)
            } else {
                heads.forget(remote)
            }
            return nil
        }
        var next = state
        let text: [UInt8]
        switch document {
        case .notModified:
            guard let stored = state.text else {
                heads.forget(remote)
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
            heads.forget(remote)
            return nil
        }
        return PolledHead(document: document, head: head, next: next)
    }

    /// A head that names another table: its pack started, the table and index it names fetched and
    /// checked through the gate, then the checks every offered table goes through.
    private func offerRelease(_ polled: PolledHead, poll: Poll, current: String?, inForce: (bytes: [UInt8], digest: String)?) throws(CenariusError) -> OfferStep? {
        let head = polled.head
        var next = polled.next
        prefetchPack(head, current: current, poll: poll)
        let fetched: (table: [UInt8], index: [UInt8]?)
        do {
            fetched = try headObjects(head, pending: poll.pending?.table, current: inForce ?? poll.tableInForce())
        } catch {
            // A delta bundle imported again on the release it brought holds that release's table and
            // index only as a patch from its base: over the table in force, nothing is new.
            if remote.isBundle, head.table == current, error.isThisFile, !isCancelled {
                return .ended(poll.ended(.unchanged, generation: poll.current?.number, entries: poll.currentMeta?.entries ?? 0, syncer))
            }
            guard error.code == .integrity || error.isThisFile, !isCancelled, !remote.headOnly else { throw error }
            heads.forget(remote)
            return nil
        }
        // Like a compressed table's: what the head gave is not the remote's word until it is
        // checked, and a refusal is not a refused release, since the table itself is asked next.
        // The checks run on a copy of the run, so this sync's own attempt stays as it was.
        var checker = self
        checker.attempt.tableFromForm = !remote.headOnly
        do {
            let verified = try checker.accepted(head, fetched, sameTable: head.table == current, poll: poll)
            let step = try checker.checked(poll, bytes: fetched.table, validators: next.validators ?? Validators(),
                                           source: .head(head, index: fetched.index, verified: verified))
            gate.see(head, verified: verified, in: &next)
            heads.write(next)
            return step
        } catch where error.code == .integrity && !isCancelled && !remote.headOnly {
            heads.forget(remote)
            return nil
        }
    }

    /// The head's signature, through the gate, before anything it names is taken. A head over the
    /// table in force refuses nothing but itself; one over another table is a refused release. The
    /// table in force, named again, is checked whatever version it was adopted at (an older head
    /// over it is no rollback); `checked` records its signature when it is later than the one held.
    private func accepted(_ head: ReleaseHead, _ fetched: (table: [UInt8], index: [UInt8]?), sameTable: Bool,
                          poll: Poll) throws(CenariusError) -> TableSignatureVerifier.Verified? {
        do {
            return try gate.accept(head: head, table: fetched.table, index: fetched.index, remote: poll.remote,
                                   inForce: sameTable ? nil : poll.currentMeta?.signedVersion)
        } catch {
            guard !sameTable else { throw error }
            let manifest = head.release.flatMap { try? ReleaseManifest.parse($0, source: poll.remote.headURL) }
            throw syncer.refused(fetched.table, manifest: manifest, error, attempt: attempt)
        }
    }

    /// The table and the index a head names, each checked against its hash: the table from the
    /// release still pending or the generation in force when it is that one, else from the store:
    /// as a patch from the table in force when the head names one (table and index in a few
    /// hundred bytes), else compressed with the index as its second frame, else whole.
    private func headObjects(_ head: ReleaseHead, pending: [UInt8]?, current: (bytes: [UInt8], digest: String)?) throws(CenariusError) -> (table: [UInt8], index: [UInt8]?) {
        func object(_ relative: String, digest: String, size: Int64) throws(CenariusError) -> [UInt8] {
            let url = remote.objectURL(relative)
            guard case .content(let body, _) = try downloader.fetchDocument(url, validators: nil, maxBytes: min(size, Int64(RouteTable.maxBytes)), options: .identity, cancel: cancel),
                  ReleaseIndex.tableDigest(body) == digest else {
                throw .integrity("\(url), which \(remote.headURL) names, is not what its name says")
            }
            return body
        }
        var table = current?.digest == head.table ? current?.bytes : pending.flatMap { ReleaseIndex.tableDigest($0) == head.table ? $0 : nil }
        var index: [UInt8]?
        if table == nil, let current, Zstd.isAvailable, let patched = patched(head, from: current) {
            (table, index) = patched
        }
        /// The compressed table, with the index as its second frame when it has one.
        func fromForm() throws(CenariusError) -> (table: [UInt8], index: [UInt8]?)? {
            guard let form = head.tableForm, let size = head.tableFormSize, Zstd.isAvailable else { return nil }
            let bytes = try object(ReleaseHead.tableFormPath(form), digest: form, size: size)
            let frames = try? Zstd.decompressFrames(bytes, limit: RouteTable.maxBytes + (32 << 20))
            guard let first = frames?.first, ReleaseIndex.tableDigest(first) == head.table else {
                throw .integrity("\(remote.objectURL(ReleaseHead.tableFormPath(form))) is not the table \(remote.headURL) names")
            }
            return (first, frames?.dropFirst().first.flatMap { ReleaseIndex.tableDigest($0) == head.index ? $0 : nil })
        }
        if table == nil, let formed = try fromForm() { (table, index) = formed }
        let bytes: [UInt8]
        if let table { bytes = table } else { bytes = try object(ReleaseHead.tablePath(head.table), digest: head.table, size: head.tableSize) }
        if index == nil, let digest = head.index {
            // Small, and the signature is over it: had whole so that it can be checked. A remote
            // that carries only what a first install reads (an offline bundle) has it in the
            // compressed table.
            do throws(CenariusError) {
                index = try object(ReleaseHead.indexPath(digest), digest: digest, size: 32 << 20)
            } catch where error.isThisFile {
                guard let formed = try? fromForm(), let second = formed.index else { throw error }
                index = second
            }
        }
        return (bytes, index)
    }

    /// The table and index from the head's patch whose base is `current`; nil when it names none,
    /// or the patch is missing or does not decode to what the head names: the compressed table
    /// is fetched then, as by a device that holds another table.
    private func patched(_ head: ReleaseHead, from current: (bytes: [UInt8], digest: String)) -> (table: [UInt8], index: [UInt8]?)? {
        guard let patch = head.tablePatches.first(where: { $0.from == current.digest }) else { return nil }
        let url = remote.objectURL(ReleaseHead.tablePatchPath(patch.digest))
        let limit = RouteTable.maxBytes + (32 << 20)
        let body = patch.inline.flatMap { ReleaseIndex.tableDigest($0) == patch.digest ? $0 : nil } ?? {
            guard patch.size <= Int64(limit),
                  case .content(let body, _)? = try? downloader.fetchDocument(url, validators: nil, maxBytes: patch.size, options: .identity, cancel: cancel) else { return nil }
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
}
