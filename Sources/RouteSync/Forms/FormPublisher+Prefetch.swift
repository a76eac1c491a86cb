extension FormPublisher {
    /// At most this many bytes of files have their store objects read ahead; the rest are read as they come.
    static let prefetchBudget: Int64 = 256 << 20

    /// The forms and patches the store holds that `add` will ask for, read in one call (concurrent
    /// GETs on S3) rather than one request per file: those of the files some base release lacks,
    /// which are the ones compressed or patched. A file that every base holds is carried or taken
    /// as the store has it, and one the prefetch missed is still read on its own.
    func prefetch(_ run: Run) -> [String: [UInt8]] {
        guard let storeRead, let storeHolds else { return [:] }
        var keys: [String] = []
        var budget = Self.prefetchBudget
        for entry in run.files where !run.oldSets.allSatisfy({ $0.contains(entry.hash) }) {
            let size = entry.size ?? 0
            guard budget >= size else { break }
            budget -= size
            let form = ReleaseIndex.formPath(entry.hash)
            let listed = listedForm(entry.hash, below: Int(size), run: run)
            // A listed form is needed only where no patch the listing shows smaller is the frame.
            var formNeeded = listed == nil
            for k in olds.indices where !run.oldSets[k].contains(entry.hash) {
                guard let base = run.matches[k].base(for: entry.uri, size: size), base.size + size <= Self.patchWindowBudget else {
                    formNeeded = true
                    continue
                }
                let pair = ReleaseIndex.Patch(target: entry.hash, base: base.hash)
                let patch = ReleaseIndex.patchPath(pair)
                if storeHolds(patch), run.holds(patch) { keys.append(patch) }
                let patchSize = patchesByName.contains(pair) ? storeSize?(patch) : nil
                if let listed, let patchSize, patchSize < Int64(min(listed, Int(size))) { continue }
                formNeeded = true
            }
            if formNeeded, heldForms[form] == nil, FileSystem.regularFileSize(FileSystem.join(run.root, form)) == nil, storeHolds(form) { keys.append(form) }
        }
        return keys.isEmpty ? [:] : storeRead(Array(Set(keys)))
    }

    /// A store object's bytes: prefetched, else read now.
    func storeObject(_ key: String) -> [UInt8]? {
        fetched[key] ?? storeRead?([key])[key]
    }
}
