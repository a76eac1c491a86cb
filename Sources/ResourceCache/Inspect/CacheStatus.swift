package import RouteSync
import Transport

/// `cenariusd status`: what is in force and how old it is.
package struct CacheStatus: Sendable, Codable {
    package struct GenerationInfo: Sendable, Codable {
        package var number: Int
        package var current: Bool
        package var entries: Int?
        package var committedAt: Double?
        package var cachedFiles: Int?
        package var cachedBytes: Int64?
        /// On trial (G9): current, not yet confirmed.
        package var trial: Bool?
        package var confirmed: Bool?
    }

    package var remote: String?
    package var cache: String
    package var preset: String
    /// "cache" once a sync has committed, "preset" before.
    package var tableSource: String
    package var entries: Int
    package var generation: Int?
    package var etag: String?
    package var lastModified: String?
    /// Seconds since the table in force was committed, and since the remote last answered.
    package var tableAge: Double?
    package var checkedAge: Double?
    /// The same as times (seconds since 1970): what the daemon's status reply carries instead of
    /// ages, so that an unchanged status keeps its validator.
    package var committedAt: Double?
    package var checkedAt: Double?
    package var objects: Int
    package var objectBytes: Int64
    package var generations: [GenerationInfo]
    /// The current generation is on trial until `trialDeadline` (seconds since 1970).
    package var trial: Bool
    package var trialDeadline: Double?
    /// The generation a failed trial goes back to (nil: the preset).
    package var confirmedGeneration: Int?
    package var lastRollback: ReleaseState.RollbackRecord?
    /// A published release this device has not adopted yet, and why (G10).
    package var deferred: Deferred?
    /// Active holds: switches wait until the last one ends.
    package var holds: [Hold]
    /// With public keys configured: the signed table in force and the keys trusted (G8).
    package var signature: SignatureStatus?

    package struct Deferred: Sendable, Codable {
        package var release: String
        /// For people: what it waits for, e.g. "requires native 2.3.0, have 2.1.0".
        package var reason: String
        /// `time`, `halted`, `compatibility` or `hold`.
        package var waitsFor: String
        /// This device's place in the rollout, in [0, 1), and when it adopts (unix seconds).
        package var place: Double?
        package var at: Double?
        package var since: Double
        package var checkedAt: Double
    }

    /// Without the ages (they change every second): times only.
    package var timeless: CacheStatus {
        var status = self
        status.tableAge = nil
        status.checkedAge = nil
        return status
    }

    package static func read(_ settings: SyncSettings) throws(CenariusError) -> CacheStatus {
        let layout = settings.cache
        let store = GenerationStore(layout: layout)
        let current = store.current()
        let now = FileSystem.now()
        let meta = try? current?.meta()
        let entries: Int
        if let current { entries = try current.table().count } else { entries = try settings.preset.table().count }
        var objects = 0
        var bytes: Int64 = 0
        for (_, path) in ObjectStore(layout: layout).all() {
            objects += 1
            bytes += FileSystem.regularFileSize(path) ?? 0
        }
        let release = ReleaseStore(layout: layout).read()
        let generations = store.all().map { generation in
            let meta = try? generation.meta()
            return GenerationInfo(
                number: generation.number, current: generation.number == current?.number,
                entries: (try? generation.table())?.count, committedAt: meta?.committedAt,
                cachedFiles: meta?.cachedFiles, cachedBytes: meta?.cachedBytes,
                trial: release.trial?.generation == generation.number, confirmed: release.confirmed == generation.number)
        }
        return CacheStatus(
            remote: settings.remote.map { Secrets.redact($0.base) }, cache: layout.root, preset: settings.preset.root,
            tableSource: current == nil ? "preset" : "cache", entries: entries, generation: current?.number,
            etag: meta?.validators.etag, lastModified: meta?.validators.lastModified,
            tableAge: meta.map { now - $0.committedAt },
            checkedAge: FileSystem.modificationTime(layout.checked).map { now - $0 },
            committedAt: meta?.committedAt, checkedAt: FileSystem.modificationTime(layout.checked),
            objects: objects, objectBytes: bytes, generations: generations,
            trial: release.trial != nil && release.trial?.generation == current?.number, trialDeadline: release.trial?.deadline,
            confirmedGeneration: release.confirmed, lastRollback: release.lastRollback,
            deferred: Deferred.read(layout),
            holds: HoldStore(layout: layout).active(),
            signature: SignatureStatus.read(settings, meta: meta))
    }
}

extension CacheStatus.Deferred {
    /// The release waiting in `pending/`, if any.
    package static func read(_ layout: CacheLayout) -> CacheStatus.Deferred? {
        PendingStore(layout: layout).record().map {
            CacheStatus.Deferred(release: $0.release, reason: $0.detail, waitsFor: $0.reason, place: $0.place, at: $0.moment,
                                 since: $0.seenAt, checkedAt: $0.checkedAt)
        }
    }
}
