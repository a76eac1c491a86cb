package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The contract's lookup order: cache → preset → refetch → stale copy. Readers take no lock:
/// one readlink picks the generation, and everything after reads that generation only (G2, G6).
package struct Resolver: Sendable {
    package let settings: SyncSettings
    /// Set in develop mode: the one folder served, no table, no network.
    package let developFolder: ServedFolder?
    /// Parsed tables kept between lookups (long-lived processes); nil reads them each time.
    package let tables: TableCache?

    package init(settings: SyncSettings, developFolder: ServedFolder? = nil, tables: TableCache? = nil) {
        self.settings = settings
        self.developFolder = developFolder
        self.tables = tables
    }

    private func table(of generation: Generation) throws(CenariusError) -> RouteTable {
        if let tables { return try tables.table(of: generation) }
        return try generation.table()
    }

    private func presetTable() throws(CenariusError) -> RouteTable {
        if let tables { return try tables.presetTable(settings.preset) }
        return try settings.preset.table()
    }

    package struct Options: Sendable {
        package var offline = false
        package var strict = false
        package init(offline: Bool = false, strict: Bool = false) {
            self.offline = offline
            self.strict = strict
        }
    }

    /// A one-shot process's lookup: it may refetch the table itself (single-flight across
    /// processes through the writer lock).
    package func resolve(_ raw: String, options: Options = Options()) throws(CenariusError) -> Resolution {
        let uri = try URIPath(lookup: raw)
        if let developFolder {
            guard let path = developFolder.file(uri) else { throw .notFound("\(uri) is not in the develop folder \(developFolder.root)") }
            return Resolution(uri: uri.value, path: path, source: .develop, hash: nil, stale: false)
        }
        let store = GenerationStore(layout: settings.cache)
        // A one-shot process answers from an index where it can; a parsed preset table is
        // indexed for the next one.
        var presetIdentity: String?
        if tables == nil {
            if let generation = store.current() {
                if let answer = try indexed(uri, in: generation) { return answer }
            } else {
                presetIdentity = PresetIndex.identity(settings.preset)
                if let presetIdentity, let answer = try presetIndexed(uri, identity: presetIdentity) { return answer }
            }
        }
        var refreshError: CenariusError?
        let canRefresh = !options.offline && settings.remote != nil
        for round in 0..<2 {
            let generation = store.current()
            let table: RouteTable
            var presetTable: RouteTable?
            if let generation {
                table = try self.table(of: generation)
            } else {
                presetTable = try self.presetTable()
                table = presetTable!
                if round == 0, let presetIdentity { PresetIndex.write(table, identity: presetIdentity, layout: settings.cache) }
            }
            if table.count == 0 && generation == nil && round == 0 && canRefresh {
                // Nothing shipped and nothing synced yet: the first lookup fetches the table.
                refreshError = refetch()
                continue
            }
            guard let entry = table[uri] else {
                guard let generation else { throw notInPreset(uri) }
                throw .notFound("\(uri) is not in the route table (generation \(generation.number))")
            }
            let fresh: Resolution.Source = round == 0 ? .cache : .remote
            if let generation, let path = cachedPath(entry, in: generation) {
                return Resolution(uri: uri.value, path: path, source: fresh, hash: entry.hash.hex, stale: false)
            }
            let presetEntries: RouteTable
            if let presetTable { presetEntries = presetTable } else { presetEntries = try self.presetTable() }
            if let path = settings.preset.file(for: entry, in: presetEntries) {
                return Resolution(uri: uri.value, path: path, source: .preset, hash: entry.hash.hex, stale: false)
            }
            guard round == 0, canRefresh else { break }
            refreshError = refetch()
            if refreshError != nil { break }
        }
        return try staleCopy(uri, options: options, reason: refreshError)
    }

    /// The common case answered from the generation's index without parsing any table: the uri
    /// is absent, held in the cache, or served by an unchanged preset. nil: take the full path.
    private func indexed(_ uri: URIPath, in generation: Generation) throws(CenariusError) -> Resolution? {
        guard let hit = GenerationIndex.lookup(uri, in: generation) else { return nil }
        guard case .present(let hash, let fromPreset, let identity) = hit else {
            throw .notFound("\(uri) is not in the route table (generation \(generation.number))")
        }
        let entry = RouteEntry(uri: uri, hash: hash)
        if let path = cachedPath(entry, in: generation) {
            return Resolution(uri: uri.value, path: path, source: .cache, hash: hash.hex, stale: false)
        }
        guard fromPreset, identity == GenerationIndex.presetIdentity(settings.preset), let path = settings.preset.folder.file(uri) else { return nil }
        return Resolution(uri: uri.value, path: path, source: .preset, hash: hash.hex, stale: false)
    }

    /// Before any sync: the preset's index answers a uri the preset serves or does not list.
    private func presetIndexed(_ uri: URIPath, identity: String) throws(CenariusError) -> Resolution? {
        guard let hit = PresetIndex.lookup(uri, identity: identity, layout: settings.cache) else { return nil }
        guard case .present(let hash, _, _) = hit else { throw notInPreset(uri) }
        guard let path = settings.preset.folder.file(uri) else { return nil }
        return Resolution(uri: uri.value, path: path, source: .preset, hash: hash.hex, stale: false)
    }

    private func notInPreset(_ uri: URIPath) -> CenariusError {
        .notFound("\(uri) is not in the route table (preset \(settings.preset.tablePath))")
    }

    private func refetch() -> CenariusError? {
        do {
            _ = try Syncer(settings: settings).refetch()
            return nil
        } catch {
            return error
        }
    }

    /// The daemon's lookup, which never blocks on the network: answer from what is held; when
    /// nothing current is held, `refresh` (the daemon's single-flight, throttled sync) runs and
    /// the lookup is made again. Offline otherwise, so the order is the one `resolve` keeps.
    /// Runs a lookup's file-system work where blocking is allowed (the daemon's thread pool).
    package typealias Blocking = @Sendable (_ lookup: @escaping @Sendable () throws(CenariusError) -> Resolution) async throws(CenariusError) -> Resolution

    package func resolve(_ raw: String, blocking: Blocking = { lookup throws(CenariusError) in try lookup() },
                         refresh: () async -> CenariusError?) async throws(CenariusError) -> Resolution {
        var firstError: CenariusError?
        let held = { @Sendable () throws(CenariusError) -> Resolution in try self.resolve(raw, options: .init(offline: true)) }
        do {
            let resolution = try await blocking(held)
            if !resolution.stale { return resolution }
        } catch {
            let nothingSynced = GenerationStore(layout: settings.cache).current() == nil
            if error.code == .notFound && !nothingSynced { throw error }
            if developFolder != nil || error.code == .usage || error.code == .integrity { throw error }
            firstError = error
        }
        guard developFolder == nil, settings.remote != nil else {
            throw firstError ?? .remote("no current copy of \(raw) and no remote configured")
        }
        let refreshError = await refresh()
        var resolution: Resolution
        do {
            resolution = try await blocking(held)
        } catch {
            throw refreshError.map { CenariusError($0.code, "\(error.message); refresh failed: \($0.message)") } ?? error
        }
        if !resolution.stale && resolution.source == .cache {
            // Became current through the refresh.
            resolution.source = .remote
        }
        return resolution
    }

    /// `files/<uri>` of the generation, or a link made now from the object store when the
    /// generation did not need it at commit time (say the preset was replaced since).
    func cachedPath(_ entry: RouteEntry, in generation: Generation) -> String? {
        let path = generation.filePath(entry.uri)
        if FileSystem.regularFileSize(path) != nil { return path }
        // By descriptor, through real folders only: a link planted at objects/ or objects/<xx>
        // must not make a file outside the cache look like verified content (G5).
        let layout = settings.cache
        let hex = entry.hash.hex
        guard let root = CacheFolder.at(layout.root),
              let shard = root.existingFolder("objects")?.existingFolder(String(hex.prefix(2))),
              let info = shard.status(hex), info.st_mode & S_IFMT == S_IFREG,
              let files = root.existingFolder("generations")?.existingFolder("\(generation.number)")?.existingFolder("files") else { return nil }
        let uri = entry.uri.value
        let slash = uri.utf8.lastIndex(of: UInt8(ascii: "/"))
        let leaf = slash.map { String(uri[uri.index(after: $0)...]) } ?? uri
        guard let folder = try? slash.map({ try files.folders(uri[..<$0]) }) ?? files else { return nil }
        if shard.link(hex, to: folder, as: leaf) || errno == EEXIST, FileSystem.regularFileSize(path) != nil { return path }
        return nil
    }

    /// Step 4: the newest verified copy held, flagged stale; `--strict` makes it exit 3.
    private func staleCopy(_ uri: URIPath, options: Options, reason: CenariusError?) throws(CenariusError) -> Resolution {
        let why = reason?.message ?? (options.offline ? "offline" : "no remote configured")
        if options.strict {
            throw .remote("no current copy of \(uri) can be had: \(why)")
        }
        let store = GenerationStore(layout: settings.cache)
        for generation in store.all() {
            guard let table = try? generation.table(), let entry = table[uri] else { continue }
            let path = generation.filePath(uri)
            if FileSystem.regularFileSize(path) != nil {
                return Resolution(uri: uri.value, path: path, source: .cache, hash: entry.hash.hex, stale: true,
                                  warning: "serving a stale copy of \(uri) from generation \(generation.number): \(why)")
            }
        }
        if let presetTable = try? settings.preset.table(), let entry = presetTable[uri], let path = settings.preset.folder.file(uri) {
            return Resolution(uri: uri.value, path: path, source: .preset, hash: entry.hash.hex, stale: true,
                              warning: "serving the preset's stale copy of \(uri): \(why)")
        }
        throw reason ?? .remote("no copy of \(uri) is held and it cannot be fetched: \(why)")
    }
}
