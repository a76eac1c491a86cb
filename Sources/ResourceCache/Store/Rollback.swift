import Crypto
import Fleet
package import RouteSync
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
    }

    /// `cenariusd rollback`: the generation before the current one, for an operator who shipped
    /// a bad build. Recorded in the release state as a manual rollback (G9).
    package static func run(_ settings: SyncSettings) throws(CenariusError) -> Result {
        let layout = settings.cache
        guard FileSystem.isDirectory(layout.root) else { throw .notFound("nothing to roll back: no cache at \(layout.root)") }
        let lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: "roll back")
        defer { withExtendedLifetime(lock) {} }
        let store = GenerationStore(layout: layout)
        guard let current = store.current() else { throw .notFound("nothing to roll back: no generation is current in \(layout.root)") }
        guard let previous = store.all().first(where: { $0.number < current.number }) else {
            throw .notFound("no generation older than \(current.number) is kept in \(layout.root)")
        }
        try switchBack(store, from: current, to: previous)
        try ReleaseStore(layout: layout).update { state in
            var machine = TrialMachine(state: state, policy: nil)
            machine.rolledBackManually(from: current.number, to: previous.number, now: FileSystem.now())
            state = machine.state
        }
        return Result(from: current.number, to: previous.number)
    }

    /// A failed trial: `from` goes, `to` (the last confirmed generation, nil for the preset)
    /// comes back. Nothing is done when `from` is no longer current (a newer release replaced
    /// it meanwhile and is on trial of its own): false then.
    package static func failedTrial(_ settings: SyncSettings, from: Int, to: Int?) throws(CenariusError) -> Bool {
        let layout = settings.cache
        let lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: "roll back a failed trial")
        defer { withExtendedLifetime(lock) {} }
        let store = GenerationStore(layout: layout)
        guard let current = store.current(), current.number == from else { return false }
        let target = to.map { Generation(number: $0, path: layout.generation($0)) }
        try switchBack(store, from: current, to: target)
        return true
    }

    private static func switchBack(_ store: GenerationStore, from current: Generation, to target: Generation?) throws(CenariusError) {
        if let target { _ = try target.table() }
        let bytes = try FileSystem.readFile(current.tablePath)
        try FileSystem.writeAtomically(Array(fingerprint(bytes).utf8), to: store.layout.heldBack)
        FailedReleases(layout: store.layout).record((try? current.meta())?.release ?? FleetReport.releaseName(ofTable: bytes))
        if let target {
            try store.activate(target)
        } else {
            try store.deactivate()
        }
    }

    static func fingerprint(_ table: [UInt8]) -> String {
        SHA256.hash(data: table).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined()
    }
}
