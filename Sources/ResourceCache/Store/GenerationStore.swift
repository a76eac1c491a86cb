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
    /// old generation current (G2, G3).
    package func commit(building: String, number: Int) throws(CenariusError) -> Generation {
        let final = layout.generation(number)
        // One syncfs for every file and link written in this sync, instead of an fsync per file.
        let rootFD = open(layout.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else { throw FileSystem.failure("cannot open", layout.root) }
        defer { close(rootFD) }
        if cplatform_syncfs(rootFD) != 0 { throw FileSystem.failure("cannot sync", layout.root) }
        guard rename(building, final) == 0 else { throw FileSystem.failure("cannot commit generation", final) }
        try syncDirectory(layout.generations)
        let link = layout.currentNext
        unlink(link)
        guard symlink("generations/\(number)", link) == 0 else { throw FileSystem.failure("cannot create", link) }
        guard rename(link, layout.current) == 0 else { throw FileSystem.failure("cannot switch", layout.current) }
        try syncDirectory(layout.root)
        return Generation(number: number, path: final)
    }

    /// Makes an older committed generation current again (rollback).
    package func activate(_ generation: Generation) throws(CenariusError) {
        let link = layout.currentNext
        unlink(link)
        guard symlink("generations/\(generation.number)", link) == 0 else { throw FileSystem.failure("cannot create", link) }
        guard rename(link, layout.current) == 0 else { throw FileSystem.failure("cannot switch", layout.current) }
        try syncDirectory(layout.root)
    }

    /// No generation current: the preset's table is in force again (a failed first trial).
    package func deactivate() throws(CenariusError) {
        guard unlink(layout.current) == 0 || errno == ENOENT else { throw FileSystem.failure("cannot switch", layout.current) }
        try syncDirectory(layout.root)
    }

    func syncDirectory(_ path: String) throws(CenariusError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.failure("cannot open", path) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw FileSystem.failure("cannot sync", path) }
    }

    /// Removes generations beyond the newest `keep` (current included) once they have been
    /// out of service for `grace` seconds, then objects no generation links to (G2).
    /// Call with the writer lock held.
    /// `sparing`: objects to keep although no generation links them (those a sync in progress needs).
    @discardableResult
    package func collectGarbage(keep: Int, grace: Double, sparing: Set<ContentHash> = [], now: Double = FileSystem.now()) -> (generations: Int, objects: Int, bytes: Int64) {
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
            FileSystem.removeTree(generation.path)
            removedGenerations += 1
        }
        // Leftover half-built generations from a crash.
        for name in FileSystem.listDirectory(layout.generations) where name.hasSuffix(".building") {
            FileSystem.removeTree(layout.generations + "/" + name)
        }
        // An object whose only link is its own store entry is referenced by no generation.
        var removedObjects = 0
        var removedBytes: Int64 = 0
        for shard in FileSystem.listDirectory(layout.objects) {
            let dir = layout.objects + "/" + shard
            for name in FileSystem.listDirectory(dir) {
                let path = dir + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0, info.st_nlink <= 1 else { continue }
                if !sparing.isEmpty, let hash = ContentHash(hex: name), sparing.contains(hash) { continue }
                if unlink(path) == 0 {
                    removedObjects += 1
                    removedBytes += Int64(info.st_size)
                }
            }
        }
        removedBytes += collectCompressedCopies()
        return (removedGenerations, removedObjects, removedBytes)
    }

    /// The daemon's gzip copies (`<cache>/gzip/<hash>.gz`) of content no kept generation lists.
    /// Kept generations are read through their indexes; without one, nothing is removed.
    private func collectCompressedCopies() -> Int64 {
        let folder = layout.compressed
        let names = FileSystem.listDirectory(folder)
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
        for name in names where name.hasSuffix(".gz") && !listed.contains(String(name.dropLast(3))) {
            let path = folder + "/" + name
            removed += FileSystem.regularFileSize(path) ?? 0
            unlink(path)
        }
        return removed
    }
}
