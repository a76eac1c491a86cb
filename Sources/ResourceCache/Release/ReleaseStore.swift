package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// `<cache>/release.json`: the release state, one file — `ReleaseMachine`'s state (the trial, the
/// confirmed generation, the last rollback) and the records beside it (the table held back, the
/// releases given up, the app's holds) — written crash-safely (a temporary file, fsync, rename,
/// fsync of the folder), so that a kill -9 or a power loss during a trial leaves either the old or
/// the new state and the trial survives the daemon (G9).
///
/// Every writer holds `release.lock` for the short read-modify-write, not the writer lock, which
/// a long sync may hold for minutes (a rollback takes the writer lock first, then this one, in a
/// sync's order). The machine's fields have one owner: with a daemon running its
/// `ReleaseSupervisor` (the command line asks it), else `confirm` and `rollback` through
/// `LocalRelease`. The records are written by whoever makes the event: a switch back, a refused
/// table, a hold, a switch that clears the table held back.
package struct ReleaseStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    /// The recorded state; an empty one before the first trial or when the file is unreadable
    /// (a damaged file must not stop the daemon: the start reconciles it with `current`).
    /// A cache written before the records moved here has them in files of their own: they are
    /// read as part of the state, and removed at the next write.
    package func read() -> ReleaseState {
        var state = JSONFile.read(ReleaseState.self, layout.releaseState) ?? ReleaseState()
        if state.heldBack == nil, let bytes = try? FileSystem.readFile(layout.heldBack, limit: 256) {
            state.heldBack = String(decoding: bytes, as: UTF8.self)
        }
        if state.failedReleases.isEmpty, let bytes = try? FileSystem.readFile(layout.failedReleases, limit: 4096),
           case .array(let items)? = try? JSONValue.parse(bytes, source: layout.failedReleases) {
            state.failedReleases = items.compactMap(\.string)
        }
        if state.holds.isEmpty, let holds = JSONFile.read([Hold].self, layout.holds) { state.holds = holds }
        return state
    }

    /// Read, change and write under `release.lock`.
    package func update<T>(_ change: (inout ReleaseState) throws(CenariusError) -> T) throws(CenariusError) -> T {
        try FileSystem.makeDirectories(layout.root)
        let lock = try WriterLock(path: layout.releaseLock, timeout: 10, purpose: "update \(layout.releaseState)")
        defer { withExtendedLifetime(lock) {} }
        return try updateHoldingLock(change)
    }

    /// `update` by a caller that holds `release.lock` already (a sync's switch, which takes it for
    /// the machine's leave): flock(2) would wait for the lock this process holds.
    package func updateHoldingLock<T>(_ change: (inout ReleaseState) throws(CenariusError) -> T) throws(CenariusError) -> T {
        var state = read()
        let before = state
        let result = try change(&state)
        let legacy = [layout.heldBack, layout.failedReleases, layout.holds].filter(FileSystem.exists)
        if state != before || !legacy.isEmpty {
            try JSONFile.write(state, to: layout.releaseState, durable: true)
            for path in legacy { unlink(path) }
        }
        return result
    }

    /// Generations garbage collection must keep: the confirmed one (a failed trial goes back to
    /// it, however many releases came since) and the one on trial.
    package func pinnedGenerations() -> Set<Int> {
        let state = read()
        return Set([state.confirmed, state.trial?.generation].compactMap { $0 })
    }
}
