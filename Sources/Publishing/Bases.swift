package import RouteSync

/// The earlier releases a new one is patched against, rebuilt from the remote alone: each one's
/// table from the store, and of its files only those a new file would be patched from, from
/// their compressed form (`_cenarius/z/`), their plain bytes (`_cenarius/f/`), or the file at
/// its uri when that is still the same. What the remote no longer holds is left out, and the
/// new file gets a compressed form there instead of a patch.
package enum Bases {
    package struct Release: Sendable {
        package var tableBytes: [UInt8]
        package var table: RouteTable
    }

    /// The channel's newest releases (by record, else its head, else `Routes.json`), newest first,
    /// other than the one being published; at most `count` distinct tables.
    package static func releases(of state: RemoteState, from destination: some Destination, excluding digest: String, count: Int) throws(CenariusError) -> [Release] {
        var digests: [String] = []
        for record in state.records.reversed() where !digests.contains(record.head.table) { digests.append(record.head.table) }
        if let head = state.head, !digests.contains(head.table) { digests.insert(head.table, at: 0) }
        var found: [Release] = []
        var candidates = digests.filter { $0 != digest }[...]
        // The tables still wanted, read together; one the store lacks or that does not check is replaced by the next.
        while found.count < count, !candidates.isEmpty {
            let round = candidates.prefix(count - found.count)
            candidates = candidates.dropFirst(round.count)
            let read = try destination.read(round.map(ReleaseHead.tablePath), limit: 64 << 20)
            for candidate in round {
                guard let bytes = read[ReleaseHead.tablePath(candidate)], ReleaseIndex.tableDigest(bytes) == candidate,
                      let table = try? RouteTable.parse(bytes, source: candidate) else { continue }
                found.append(Release(tableBytes: bytes, table: table))
            }
        }
        if found.isEmpty, let bytes = state.tableBytes, let table = state.table, ReleaseIndex.tableDigest(bytes) != digest {
            found.append(Release(tableBytes: bytes, table: table))
        }
        return found
    }

    /// The solid pack a new release may carry forward (FormPublisher.Carry): the one the channel's
    /// head's index made or carried, with its table (which `releases` may have passed over);
    /// nil when there is none or the store lacks what it needs. `known`: tables already read (`releases`), not read again.
    /// `index`: the head's, whose delta packs hold patches a release on it may take again (DeltaFrames).
    package static func carried(by state: RemoteState, from destination: some Destination,
                                known: [Release] = []) throws(CenariusError) -> (carry: FormPublisher.Carry, table: Release, index: ReleaseIndex)? {
        guard let head = state.head, let digest = head.index, let bytes = try destination.read(ReleaseHead.indexPath(digest)),
              ReleaseIndex.tableDigest(bytes) == digest, let index = try? ReleaseIndex.parse(bytes, source: ReleaseHead.indexPath(digest)) else { return nil }
        let carry = index.solidPack.map { FormPublisher.Carry(from: head.table, pack: $0, releases: 0) }
            ?? index.carriedPack.map { FormPublisher.Carry(from: $0.from, pack: $0.pack, releases: $0.releases) }
        guard let carry, state.objects[ReleaseIndex.packPath(carry.pack.hash)] != nil else { return nil }
        var tableBytes = known.first { ReleaseIndex.tableDigest($0.tableBytes) == carry.from }?.tableBytes
        if tableBytes == nil { tableBytes = try destination.read(ReleaseHead.tablePath(carry.from)) }
        guard let tableBytes, ReleaseIndex.tableDigest(tableBytes) == carry.from,
              let table = try? RouteTable.parse(tableBytes, source: carry.from), table.packOrder.count == carry.pack.files else { return nil }
        return (carry, Release(tableBytes: tableBytes, table: table), index)
    }

    /// Writes `folder/Routes.json` and the base files `table`'s new files need from `old`; returns how
    /// many bytes were read. With `byName` (the forms take the store's patches, FormPublisher.storeRead),
    /// a file whose patch the store holds, from a base it holds too (`holdsBase`), needs no base: its
    /// patch is added to `byName`, to be taken by its name (FormPublisher.patchesByName).
    package static func materialize(_ old: Release, for table: RouteTable, into folder: String, routesName: String,
                                    from destination: some Destination, state: RemoteState,
                                    byName: inout Set<ReleaseIndex.Patch>?) throws(CenariusError) -> Int64 {
        try FileSystem.makeDirectories(folder)
        try FileSystem.writeAtomically(old.tableBytes, to: FileSystem.join(folder, routesName), durable: false)
        let match = BaseMatch(old.table)
        let held = Set(old.table.entries.map(\.hash))
        var needed: [URIPath: BaseMatch.Candidate] = [:]
        for entry in table.entries where !held.contains(entry.hash) {
            guard let base = match.base(for: entry.uri, size: entry.size ?? 0), base.size + (entry.size ?? 0) <= FormPublisher.patchWindowBudget else { continue }
            let pair = ReleaseIndex.Patch(target: entry.hash, base: base.hash)
            if byName != nil, state.objects[ReleaseIndex.patchPath(pair)] != nil, holdsBase(base, state: state) {
                byName?.insert(pair)
                continue
            }
            needed[base.uri] = base
        }
        var read: Int64 = 0
        // Read concurrently (S3's GETs), in batches of at most 64 files and 64 MiB, as uploads are
        // written: a large site's bases are never all in memory at once.
        for batch in Array(needed.values).batches(size: \.size) {
            for (base, bytes) in try fetch(Array(batch), from: destination, state: state) {
                read += Int64(bytes.count)
                let path = FileSystem.join(folder, base.uri.value)
                try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
                try FileSystem.writeAtomically(bytes, to: path, durable: false)
            }
        }
        return read
    }

    /// Whether the store holds the base's bytes, told from the listing alone: its form or plain copy,
    /// or at its uri an object whose MD5 (S3's ETag) is its hash. A patch from a base it does not hold
    /// is left as before: the file's form is the delta frame.
    private static func holdsBase(_ base: BaseMatch.Candidate, state: RemoteState) -> Bool {
        if state.objects[ReleaseIndex.formPath(base.hash)] != nil || state.objects[ReleaseIndex.plainPath(base.hash)] != nil { return true }
        guard state.isDefaultChannel, base.hash.algorithm == .md5, let listed = state.objects[base.uri.value], let etag = listed.etag else { return false }
        return listed.size == base.size && etag.lowercased() == base.hash.hex
    }

    /// Base files' exact bytes from the remote, each checked against its hash: from their compressed
    /// forms, then plain copies, then their uris for those still missing; those it holds none of are left out.
    private static func fetch(_ bases: [BaseMatch.Candidate], from destination: some Destination,
                              state: RemoteState) throws(CenariusError) -> [(BaseMatch.Candidate, [UInt8])] {
        let limit = Int(FormPublisher.patchWindowBudget)
        var found: [(BaseMatch.Candidate, [UInt8])] = []
        var missing = bases
        func take(_ key: (BaseMatch.Candidate) -> String?, decode: ([UInt8]) -> [UInt8]?) throws(CenariusError) {
            let keyed = missing.compactMap { base in key(base).flatMap { state.objects[$0] != nil ? ($0, base) : nil } }
            guard !keyed.isEmpty else { return }
            let read = try destination.read(Array(Set(keyed.map(\.0))), limit: limit)
            var taken = Set<ContentHash>()
            for (key, base) in keyed {
                guard let bytes = read[key].flatMap(decode), StreamingHasher.hash(bytes, base.hash.algorithm) == base.hash else { continue }
                found.append((base, bytes))
                taken.insert(base.hash)
            }
            missing.removeAll { taken.contains($0.hash) }
        }
        try take({ ReleaseIndex.formPath($0.hash) }) { try? Zstd.decompress($0, limit: limit) }
        try take({ ReleaseIndex.plainPath($0.hash) }) { $0 }
        try take({ state.isDefaultChannel && mayHold($0, at: $0.uri.value, state: state) ? $0.uri.value : nil }) { $0 }
        return found
    }

    /// False when the listing already shows that the object at `key` is not the base's bytes (another
    /// size than the table gave, or an ETag that is an MD5 and not the base's): a GET of it would be thrown away.
    private static func mayHold(_ base: BaseMatch.Candidate, at key: String, state: RemoteState) -> Bool {
        guard let listed = state.objects[key], base.size == 0 || listed.size == base.size else { return false }
        guard base.hash.algorithm == .md5, let etag = listed.etag?.lowercased(), etag.utf8.count == 32,
              etag.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return true }
        return etag == base.hash.hex
    }
}
