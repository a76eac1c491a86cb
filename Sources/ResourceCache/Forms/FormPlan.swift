package import RouteSync
import Transport

/// One way of getting a file: decoded from a form, or the file itself.
package enum FormSource: Sendable, Equatable {
    /// A zstd patch against a file the device holds (`base`).
    case patch(base: ContentHash)
    /// The file compressed.
    case zstd
    /// The pack's frame number `ordinal` (a first install): one request for all the files taken from it.
    case member(Int)
    /// `<remote>/<uri>`, the last source, whose failure fails the sync as it always did.
    case plain

    var isMember: Bool {
        if case .member = self { return true }
        return false
    }

    var isPatch: Bool {
        if case .patch = self { return true }
        return false
    }
}

/// Which forms each file to download is fetched through, decided without any I/O (B8): a patch
/// from a base the device holds, else the compressed form, else the plain file; when the files
/// still to fetch that way make up most of the site (a first install), the pack's frames
/// instead, one request for them all. The sources of a file are tried in order (FormPolicy).
package struct FormPlan: Sendable, Equatable {
    /// Per file hash, its sources in order; the last is always `.plain`.
    package var sources: [ContentHash: [FormSource]] = [:]
    /// The pack to fetch, when one is worth it: its hash and size, and for each of its frames the
    /// file it gives and the base it is a patch from (nil: a compressed file).
    package var pack: (hash: ContentHash, size: Int64)?
    package var packFrames: [(entry: RouteEntry, base: ContentHash?)] = []
    /// The pack is the index's solid pack (SolidPack: one stream), not per-file frames.
    package var solid = false
    /// A first install of a release that carries an earlier table's solid pack (and names no pack
    /// of its own): the caller fetches that pack's files first (`init(carried:)`), then plans again
    /// as a device holding that table.
    package var carried: ReleaseIndex.CarriedPack?

    package static func == (lhs: FormPlan, rhs: FormPlan) -> Bool {
        lhs.sources == rhs.sources && lhs.carried == rhs.carried && lhs.bases == rhs.bases && lhs.storedPlain == rhs.storedPlain && lhs.solid == rhs.solid && lhs.pack?.hash == rhs.pack?.hash
            && lhs.packFrames.map(\.entry) == rhs.packFrames.map(\.entry) && lhs.packFrames.map(\.base) == rhs.packFrames.map(\.base)
    }

    /// The table in force on the device (its SHA-256 and hashes), which a delta pack may start from.
    package struct Held: Sendable {
        package var digest: String
        package var hashes: Set<ContentHash>
        package init(digest: String, hashes: Set<ContentHash>) {
            self.digest = digest
            self.hashes = hashes
        }
    }
    /// The objects the chosen patches decode against: garbage collection spares them.
    package var bases: Set<ContentHash> = []
    /// Files to fetch plain whose exact bytes the store holds (`_cenarius/f/`, an immutable name):
    /// fetched there, with the file at its uri as the fallback.
    package var storedPlain: Set<ContentHash> = []

    /// A pack is fetched when the files wanted from it are at least this share of its files' bytes.
    package static let packShare = 0.75

    /// What the device holds.
    package struct Holding {
        /// The table it holds, if any: a delta pack from it brings the release in one request.
        package var table: Held?
        /// Whether it holds a verified copy (cache object or preset file) of a hash.
        package var holds: (ContentHash) -> Bool
        package init(_ table: Held? = nil, holds: @escaping (ContentHash) -> Bool) {
            self.table = table
            self.holds = holds
        }
    }

    /// Where the files may come from.
    package struct Scope {
        /// The store objects the remote is known to hold (an offline bundle's listing: a finder's
        /// answer), nil when it may hold any; a form it lacks is never planned, and a pack it holds
        /// is taken whenever a file has no other source there.
        package var available: ((String) -> Bool)?
        /// The downloads are this device's share of a release for its LAN peers: a delta pack only
        /// when most of it is wanted (the others fetch the rest of it).
        package var share: Bool
        package init(available: ((String) -> Bool)? = nil, share: Bool = false) {
            self.available = available
            self.share = share
        }
    }

    /// - Parameters:
    ///   - downloads: one entry per hash to download (SyncPlan.downloads).
    ///   - table: the table the index belongs to (its distinct hashes are the pack's frames).
    package init(downloads: [RouteEntry], table: RouteTable, index: ReleaseIndex?, holding: Holding, scope: Scope = Scope()) {
        let (held, holds, available, share) = (holding.table, holding.holds, scope.available, scope.share)
        guard let index else {
            for entry in downloads { sources[entry.hash] = [.plain] }
            return
        }
        let has = available ?? { _ in true }
        if index.storedPlain { storedPlain = Set(downloads.map(\.hash)).filter { index.plain.contains($0) && has(ReleaseIndex.plainPath($0)) } }
        var patches: [ContentHash: [ContentHash]] = [:]
        for patch in index.patches { patches[patch.target, default: []].append(patch.base) }
        var unpatched: [RouteEntry] = []
        for entry in downloads {
            var list: [FormSource] = []
            for base in patches[entry.hash] ?? [] where holds(base) && has(ReleaseIndex.patchPath(.init(target: entry.hash, base: base))) {
                list.append(.patch(base: base))
                bases.insert(base)
            }
            if list.isEmpty { unpatched.append(entry) }
            if !index.plain.contains(entry.hash), has(ReleaseIndex.formPath(entry.hash)) { list.append(.zstd) }
            list.append(.plain)
            sources[entry.hash] = list
        }
        let order = table.packOrder
        let wantedHashes = Set(downloads.map(\.hash))
        // A release in one request: the frames a device holding the older table needs.
        if let held, let delta = index.deltaPacks.first(where: { $0.from == held.digest }), has(ReleaseIndex.packPath(delta.hash)) {
            let frames = order.filter { !held.hashes.contains($0.hash) }
            // A device fetching its share of a release for its LAN peers (docs/peers.md) takes its
            // files' own patches unless most of the pack is its share, not every device's whole release.
            let frameBytes = frames.reduce(0.0) { $0 + Double($1.size ?? 1) }
            let wantedBytes = frames.reduce(0.0) { $0 + (wantedHashes.contains($1.hash) ? Double($1.size ?? 1) : 0) }
            if frames.count == delta.bases.count, wantedBytes > 0, !share || wantedBytes >= Self.packShare * frameBytes,
               delta.bases.allSatisfy({ $0.map(holds) ?? true }) {
                choose(pack: (delta.hash, delta.size), frames: Array(zip(frames, delta.bases)), wanted: wantedHashes)
                for case let base? in delta.bases { bases.insert(base) }
                return
            }
        }
        // The solid pack where there is one: the same files, with the context of those before each.
        let solidPack = index.solidPack.flatMap { $0.files == order.count && has(ReleaseIndex.packPath($0.hash)) ? $0 : nil }
        let framed = index.pack.flatMap { has(ReleaseIndex.packPath($0.hash)) ? $0 : nil }
        guard !unpatched.isEmpty else { return }
        // Where the remote holds nothing else for a file, the pack is its one source whatever its share.
        let stranded = available != nil && unpatched.contains { sources[$0.hash] == [.plain] && !storedPlain.contains($0.hash) }
        // Bytes when the table gives every size, else files.
        let sized = order.allSatisfy { $0.size != nil }
        let weight = { (entry: RouteEntry) in sized ? Double(entry.size!) : 1 }
        let wanted = unpatched.reduce(0) { $0 + weight($1) }, total = order.reduce(0) { $0 + weight($1) }
        let firstInstall = total > 0 && wanted >= Self.packShare * total
        guard let pack = solidPack ?? framed, pack.files == order.count else {
            if firstInstall, let carried = index.carriedPack, carried.from != held?.digest, has(ReleaseIndex.packPath(carried.pack.hash)) { self.carried = carried }
            return
        }
        guard stranded || firstInstall else { return }
        let unpatchedHashes = Set(unpatched.map(\.hash))
        choose(pack: (pack.hash, pack.size), frames: order.map { ($0, nil) }, wanted: unpatchedHashes)
        solid = solidPack != nil
    }

    /// The carried pack's files that `wanted` names (this release's files and the bases of its
    /// delta pack from that table): `table` is the carried pack's table, checked by the caller.
    package init(carried: ReleaseIndex.CarriedPack, table: RouteTable, wanted: Set<ContentHash>) {
        let order = table.packOrder
        guard order.count == carried.pack.files else { return }
        choose(pack: (carried.pack.hash, carried.pack.size), frames: order.map { ($0, nil) }, wanted: wanted)
        solid = true
    }

    private mutating func choose(pack: (hash: ContentHash, size: Int64), frames: [(entry: RouteEntry, base: ContentHash?)], wanted: Set<ContentHash>) {
        self.pack = pack
        packFrames = frames
        for (ordinal, frame) in frames.enumerated() where wanted.contains(frame.entry.hash) {
            sources[frame.entry.hash] = [.member(ordinal)] + (sources[frame.entry.hash] ?? [.plain])
        }
    }
}
