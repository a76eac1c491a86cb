import ReportHeader
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// Switching back to an older generation, atomically, on the same link swap as a sync's commit
/// (G2). The table rolled back from is remembered, and syncs do not apply it again until the
/// remote publishes a different one.
package enum Rollback {
    package struct Result: Sendable, Codable {
        package var from: Int
        /// nil: the preset is in force again.
        package var to: Int?

        package init(from: Int, to: Int?) {
            self.from = from
            self.to = to
        }
    }

    /// Makes the switch back a `ReleaseMachine` decided, on the writer lock (behind any sync in
    /// flight): `record.from` goes, `record.to` (nil: the preset) comes back, and the table rolled
    /// back from is held back. Superseded, and nothing is done, when `current` no longer names
    /// `record.from` by the time the lock is held (a newer release replaced it meanwhile).
    package static func make(_ record: ReleaseState.RollbackRecord, permit: ReleaseMachine.SwitchPermit, settings: SyncSettings) -> ReleaseMachine.SwitchOutcome {
        let layout = settings.cache
        do throws(CenariusError) {
            let purpose = record.reason == .manual ? "roll back" : "roll back a failed trial"
            let lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: purpose)
            defer { withExtendedLifetime(lock) {} }
            return try makeLocked(record, permit: permit, layout: layout) { given throws(CenariusError) in
                try ReleaseStore(layout: layout).update { $0.giveUp(given) }
            }
        } catch {
            return .failed(error.message)
        }
    }

    /// The release a switch back leaves: its table's SHA-256 (held back) and its name (given up).
    package struct GivenUp: Sendable {
        package var table: String
        package var release: String
    }

    /// `make` with the writer lock already held. `record` is given the release left, to write into
    /// the release state before the switch is made.
    static func makeLocked(_ record: ReleaseState.RollbackRecord, permit: ReleaseMachine.SwitchPermit, layout: CacheLayout,
                           recording: (GivenUp) throws(CenariusError) -> Void) throws(CenariusError) -> ReleaseMachine.SwitchOutcome {
        let store = GenerationStore(layout: layout)
        guard let current = store.current(), current.number == record.from else { return .superseded }
        let target = record.to.map { store.generation($0) }
        if let target { _ = try target.table() }
        let bytes = try FileSystem.readFile(current.tablePath)
        try recording(GivenUp(table: ReleaseIndex.tableDigest(bytes), release: (try? current.meta())?.release ?? FleetReport.releaseName(ofTable: bytes)))
        if let target {
            try store.activate(target, permit: permit)
        } else {
            try store.deactivate(permit: permit)
        }
        return .made
    }

    /// Generations still on disk, which an operator's rollback may go back to.
    package static func kept(_ layout: CacheLayout) -> Set<Int> {
        Set(GenerationStore(layout: layout).all().map(\.number))
    }
}
