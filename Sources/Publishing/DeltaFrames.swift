package import RouteSync

/// The patches (and forms) the delta packs of the channel's head hold, as frames of those packs: a one-file
/// release right after a large one puts the large one's patches from its older releases into its
/// own delta packs again, and takes them in one request per pack rather than one per patch (the
/// pack is read whole only when the patches it is asked for are at least half of it).
package struct DeltaFrames: Sendable {
    private struct Frame: Sendable {
        var pack: ReleaseIndex.DeltaPack
        var ordinal: Int
    }

    private var frames: [String: Frame] = [:]

    /// `index` and `table`: the head's; `olds`: the releases its delta packs may start from.
    package init(index: ReleaseIndex, table: RouteTable, olds: [Bases.Release]) {
        let order = table.packOrder
        for delta in index.deltaPacks {
            guard let old = olds.first(where: { ReleaseIndex.tableDigest($0.tableBytes) == delta.from }) else { continue }
            // A delta pack's frames are the files its table lacks, in pack order (FormPublisher.add).
            let held = Set(old.table.entries.map(\.hash))
            let targets = order.filter { !held.contains($0.hash) }
            guard targets.count == delta.bases.count else { continue }
            for (ordinal, (target, base)) in zip(targets, delta.bases).enumerated() {
                // A frame without a base is a compressed form of the file: the reader decodes and checks what it takes as one.
                let key = base.map { ReleaseIndex.patchPath(ReleaseIndex.Patch(target: target.hash, base: $0)) } ?? ReleaseIndex.formPath(target.hash)
                frames[key] = Frame(pack: delta, ordinal: ordinal)
            }
        }
    }

    /// The bytes of those of `keys` the destination holds, as `Destination.read` gives them: a patch
    /// cut from a pack that holds it when that pack is read, else read on its own.
    package func read(_ keys: [String], from destination: some Destination, objects: [String: StoredObject],
                      limit: Int) throws(CenariusError) -> [String: [UInt8]] {
        var wanted: [String: [(key: String, ordinal: Int)]] = [:]
        var packs: [String: ReleaseIndex.DeltaPack] = [:]
        var alone: [String] = []
        for key in keys {
            guard let frame = frames[key] else {
                alone.append(key)
                continue
            }
            let pack = ReleaseIndex.packPath(frame.pack.hash)
            wanted[pack, default: []].append((key, frame.ordinal))
            packs[pack] = frame.pack
        }
        for (pack, asked) in wanted {
            let bytes = asked.reduce(Int64(0)) { $0 + (objects[$1.key]?.size ?? 0) }
            guard let delta = packs[pack], objects[pack]?.size == delta.size, delta.size <= limit, 2 * bytes >= delta.size else {
                alone += asked.map(\.key)
                wanted[pack] = nil
                continue
            }
        }
        var found = try destination.read(alone + wanted.keys, limit: limit)
        var missed: [String] = []
        for (pack, asked) in wanted {
            guard let bytes = found.removeValue(forKey: pack), let delta = packs[pack],
                  StreamingHasher.hash(bytes, delta.hash.algorithm) == delta.hash,
                  let lengths = Zstd.frameLengths(bytes), lengths.count == delta.bases.count else {
                missed += asked.map(\.key)
                continue
            }
            var offsets = [0]
            for length in lengths { offsets.append(offsets[offsets.count - 1] + length) }
            for (key, ordinal) in asked { found[key] = Array(bytes[offsets[ordinal]..<offsets[ordinal + 1]]) }
        }
        if !missed.isEmpty { found.merge(try destination.read(missed, limit: limit)) { a, _ in a } }
        return found
    }
}
