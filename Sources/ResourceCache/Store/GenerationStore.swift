import CPlatform
package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// Reads the current generation without any lock (a readlink), and commits and collects
/// generations under the writer lock.
package struct GenerationStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    /// The generation `current` points at; nil before the first sync.
    package func current() -> Generation? {
        guard let number = GenerationStore.currentNumber(link: layout.current) else { return nil }
        return Generation(number: number, path: layout.generation(number))
    }

    /// The number of the generation the link at `currentLink` points at, read without
    /// allocating: the daemon does this once per request.
    package static func currentNumber(link currentLink: String) -> Int? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Int? in
            let n = readlink(currentLink, buffer.baseAddress!, buffer.count)
            let prefix = "generations/".utf8
            guard n > prefix.count, n < buffer.count else { return nil }
            let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: n)
            guard bytes.prefix(prefix.count).elementsEqual(prefix) else { return nil }
            var number = 0
            for byte in bytes.dropFirst(prefix.count) {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), number < Int.max / 10 - 10 else { return nil }
                number = number * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return number
        }
    }

    /// Committed generation `number` (which may since have been collected).
    package func generation(_ number: Int) -> Generation {
        Generation(number: number, path: layout.generation(number))
    }

    /// Committed generations, newest first.
    package func all() -> [Generation] {
        FileSystem.listDirectory(layout.generations)
            .compactMap { Int($0) }
            .sorted(by: >)
            .map { Generation(number: $0, path: layout.generation($0)) }
    }

    /// Makes a fully built generation current: fsync the data, rename the folder into place,
    /// then swap the `current` symlink by rename(2). A crash before the last rename leaves the
    /// old generation current (G2, G3). Every step is relative to the cache's folders, opened
    /// without following links.
    package func commit(building: String, number: Int, permit: ReleaseMachine.SwitchPermit) throws(CenariusError) -> Generation {
        let cache = try OpenedCache(layout: layout)
        // One syncfs for every file and link written in this sync, instead of an fsync per file.
        if cplatform_syncfs(cache.root.descriptor) != 0 { throw FileSystem.failure("cannot sync", layout.root) }
        let name = String(building.dropFirst(layout.generations.count + 1))
        guard FileSystem.parentDirectory(of: building) == layout.generations, !name.isEmpty else {
            throw .internal("a generation is built outside \(layout.generations): \(building)")
        }
        try cache.generations.rename(name, to: cache.generations, as: "\(number)")
        try cache.generations.sync()
        try point(cache.root, at: number)
        return Generation(number: number, path: layout.generation(number))
    }

    /// Makes an older committed generation current again (rollback).
    package func activate(_ generation: Generation, permit: ReleaseMachine.SwitchPermit) throws(CenariusError) {
        guard let root = try CacheFolder.root(layout.root, create: false) else { throw .storage("no cache at \(layout.root)") }
        try point(root, at: generation.number)
    }

    /// `current` -> `generations/<number>`: a link made aside, then renamed over `current`.
    private func point(_ root: CacheFolder, at number: Int) throws(CenariusError) {
        root.remove("current.next")
        guard symlinkat("generations/\(number)", root.descriptor, "current.next") == 0 else {
            throw FileSystem.failure("cannot create", layout.currentNext)
        }
        try root.rename("current.next", to: root, as: "current")
        try root.sync()
    }

    /// No generation current: the preset's table is in force again (a failed first trial).
    package func deactivate(permit: ReleaseMachine.SwitchPermit) throws(CenariusError) {
        guard let root = try CacheFolder.root(layout.root, create: false) else { return }
        root.remove("current")
        try root.sync()
    }

    /// Removes generations beyond the newest `keep` (current included) once they have been
    /// out of service for `grace` seconds, then objects no generation links to (G2).
    /// Call with the writer lock held.
    /// `sparing`: objects to keep although no generation links them (those a sync in progress needs).
    @discardableResult
    package func collectGarbage(keep: Int, grace: Double, sparing: Set<ContentHash> = [], now: Double = FileSystem.now()) -> (generations: Int, objects: Int, bytes: Int64) {
        guard let cache = try? OpenedCache(layout: layout) else { return (0, 0, 0) }
        let generations = all()
        // The confirmed generation is what a failed trial goes back to, however old it is (G9).
        let pinned = ReleaseStore(layout: layout).pinnedGenerations()
        let current = current()?.number
        var removedGenerations = 0
        // A generation went out of service when the next newer one was committed.
        var retiredAt = now
        for (position, generation) in generations.enumerated() {
            defer { retiredAt = (try? generation.meta().committedAt) ?? FileSystem.modificationTime(generation.path) ?? now }
            guard position >= max(keep, 1), generation.number != current, !pinned.contains(generation.number) else { continue }
            guard now - retiredAt >= grace else { continue }
            cache.generations.remove("\(generation.number)")
            removedGenerations += 1
        }
        // Leftover half-built generations from a crash, and anything else planted there.
        for name in cache.generations.entries() where Int(name) == nil || cache.generations.status(name).map({ $0.st_mode & S_IFMT != S_IFDIR }) ?? true {
            cache.generations.remove(name)
        }
        // An object whose only link is its own store entry is referenced by no generation;
        // anything but a regular file in the store was not put there by cenariusd.
        var removedObjects = 0
        var removedBytes: Int64 = 0
        for shardName in cache.objects.entries() {
            guard let shard = try? cache.objects.folder(shardName, create: false) else { continue }
            for name in shard.entries() {
                guard let info = shard.status(name) else { continue }
                let regular = info.st_mode & S_IFMT == S_IFREG
                guard !regular || info.st_nlink <= 1 else { continue }
                if regular, !sparing.isEmpty, let hash = ContentHash(hex: name), sparing.contains(hash) { continue }
                shard.remove(name)
                if regular {
                    removedObjects += 1
                    removedBytes += Int64(info.st_size)
                }
            }
        }
        removedBytes += collectCompressedCopies(in: cache.root)
        return (removedGenerations, removedObjects, removedBytes)
    }

    /// The daemon's gzip copies (`<cache>/gzip/<hash>.gz`) of content no kept generation lists.
    /// Kept generations are read through their indexes; without one, nothing is removed.
    private func collectCompressedCopies(in root: CacheFolder) -> Int64 {
        guard let folder = try? root.folder("gzip", create: false) else { return 0 }
        let names = folder.entries()
        guard !names.isEmpty else { return 0 }
        var listed = Set<String>()
        for generation in all() {
            guard let bytes = try? FileSystem.readFile(GenerationIndex.path(generation)) else { return 0 }
            for line in bytes.split(separator: 0x0A).dropFirst() {
                let fields = line.split(separator: 0x09)
                if fields.count == 3 { listed.insert(String(decoding: fields[1], as: UTF8.self)) }
            }
        }
        var removed: Int64 = 0
        for name in names {
            guard let info = folder.status(name) else { continue }
            let regular = info.st_mode & S_IFMT == S_IFREG
            // Regular files without the suffix are the daemon's copies being written.
            guard !regular || (name.hasSuffix(".gz") && !listed.contains(String(name.dropLast(3)))) else { continue }
            if regular { removed += Int64(info.st_size) }
            folder.remove(name)
        }
        return removed
    }
}
