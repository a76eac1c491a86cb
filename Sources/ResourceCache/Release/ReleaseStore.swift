import FoundationEssentials
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// `<cache>/release.json`: the trial's state, written crash-safely (a temporary file, fsync,
/// rename, fsync of the folder), so that a kill -9 or a power loss during a trial leaves either
/// the old or the new state and the trial survives the daemon (G9).
///
/// Its writers (the daemon, `confirm`, `rollback`) hold `release.lock` for the short
/// read-modify-write, not the writer lock, which a long sync may hold for minutes.
public struct ReleaseStore: Sendable {
    public let layout: CacheLayout

    public init(layout: CacheLayout) {
        self.layout = layout
    }

    /// The recorded state; an empty one before the first trial or when the file is unreadable
    /// (a damaged file must not stop the daemon: the start reconciles it with `current`).
    public func read() -> ReleaseState {
        guard let bytes = try? FileSystem.readFile(layout.releaseState, limit: 1 << 20),
              let state = try? JSONDecoder().decode(ReleaseState.self, from: Data(bytes)) else { return ReleaseState() }
        return state
    }

    public func write(_ state: ReleaseState) throws(CenariusError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(state) else { throw .internal("cannot encode the release state") }
        try FileSystem.makeDirectories(layout.root)
        try FileSystem.writeAtomically(Array(data), to: layout.releaseState, durable: true)
        let fd = open(layout.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    /// Read, change and write under `release.lock`.
    public func update<T>(timeout: Double = 10, _ change: (inout ReleaseState) throws(CenariusError) -> T) throws(CenariusError) -> T {
        try FileSystem.makeDirectories(layout.root)
        let lock = try WriterLock(path: layout.releaseLock, timeout: timeout, purpose: "update the release state")
        defer { withExtendedLifetime(lock) {} }
        var state = read()
        let before = state
        let result = try change(&state)
        if state != before { try write(state) }
        return result
    }

    /// Generations garbage collection must keep: the confirmed one (a failed trial goes back to
    /// it, however many releases came since) and the one on trial.
    public func pinnedGenerations() -> Set<Int> {
        let state = read()
        return Set([state.confirmed, state.trial?.generation].compactMap { $0 })
    }
}
