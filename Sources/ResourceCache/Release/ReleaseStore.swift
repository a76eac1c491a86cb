package import RouteSync

/// `<cache>/release.json`: `ReleaseMachine`'s state, written crash-safely (a temporary file,
/// fsync, rename, fsync of the folder), so that a kill -9 or a power loss during a trial leaves
/// either the old or the new state and the trial survives the daemon (G9).
///
/// With a daemon running, its `ReleaseSupervisor` is the only writer (the command line asks it);
/// without one, `confirm` and `rollback` write it through `LocalRelease`. Writers hold
/// `release.lock` for the short read-modify-write, not the writer lock, which a long sync may hold
/// for minutes (a rollback takes the writer lock first, then this one, in a sync's order).
package struct ReleaseStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    /// The recorded state; an empty one before the first trial or when the file is unreadable
    /// (a damaged file must not stop the daemon: the start reconciles it with `current`).
    package func read() -> ReleaseState {
        JSONFile.read(ReleaseState.self, layout.releaseState) ?? ReleaseState()
    }

    /// Read, change and write under `release.lock`.
    package func update<T>(_ change: (inout ReleaseState) throws(CenariusError) -> T) throws(CenariusError) -> T {
        try JSONFile.update(layout.releaseState, lock: layout.releaseLock, empty: ReleaseState(), durable: true, change)
    }

    /// Generations garbage collection must keep: the confirmed one (a failed trial goes back to
    /// it, however many releases came since) and the one on trial.
    package func pinnedGenerations() -> Set<Int> {
        let state = read()
        return Set([state.confirmed, state.trial?.generation].compactMap { $0 })
    }
}
