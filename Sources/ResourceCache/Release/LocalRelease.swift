package import RouteSync

/// `cenariusd confirm` and `cenariusd rollback` when no daemon serves the cache: the same
/// `ReleaseMachine`, loaded from the cache and the `current` link, its actions carried out here.
/// With a daemon running the command line asks it instead (its actor owns the state).
///
/// Locks are taken in the order a sync takes them (the writer lock, then `release.lock`), so a
/// rollback and a sync's commit never wait for each other crosswise.
package enum LocalRelease {
    /// Confirms `generation` (nil: the one on trial, else the current one).
    package static func confirm(_ generation: Int?, settings: SyncSettings) throws(CenariusError) -> (Int, ReleaseMachine.ConfirmAnswer) {
        let layout = settings.cache
        return try ReleaseStore(layout: layout).update { state throws(CenariusError) in
            var machine = load(state, settings: settings)
            let wanted = generation ?? state.trial?.generation ?? machine.current ?? 0
            let (answer, _) = machine.confirm(wanted)
            state.takeMachine(machine.state)
            return (wanted, answer)
        }
    }

    /// An operator's rollback: to the confirmed generation from a trial, else to the newest
    /// confirmed one before the current (never to a release that failed).
    package static func rollback(settings: SyncSettings) throws(CenariusError) -> Rollback.Result {
        let layout = settings.cache
        guard FileSystem.isDirectory(layout.root) else { throw .notFound("nothing to roll back: no cache at \(layout.root)") }
        let lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: "roll back")
        defer { withExtendedLifetime(lock) {} }
        return try ReleaseStore(layout: layout).update { state throws(CenariusError) in
            var machine = load(state, settings: settings)
            machine.holdsChanged(until: HoldStore(layout: layout).active().map(\.expires).max())
            let now = FileSystem.now()
            switch machine.rollbackRequested(kept: Rollback.kept(layout), now: now) {
            case .refused(let error):
                throw error
            case .switching(let record):
                guard let permit = machine.permitSwitch(record) else { throw .internal("the release machine decided a switch it does not permit") }
                // Under `release.lock` already: the release left is written with the machine's state.
                var givenUp: Rollback.GivenUp?
                let outcome = try Rollback.makeLocked(record, permit: permit, layout: layout) { givenUp = $0 }
                _ = machine.switchFinished(record, outcome)
                guard outcome == .made else { throw .notFound("generation \(record.from) is no longer current") }
                state.takeMachine(machine.state)
                if let givenUp { state.giveUp(givenUp) }
                return Rollback.Result(from: record.from, to: record.to)
            }
        }
    }

    /// A sync's switch: run `body` with the machine's leave, under `release.lock`, when the
    /// machine, loaded with the cache's holds, gives it; nil when a hold is active. Holds are
    /// added under the same lock, so a hold is either seen here or made after the switch.
    package static func whenCommitPermitted<T>(layout: CacheLayout, now: @autoclosure () -> Double = FileSystem.now(),
                                               _ body: (ReleaseMachine.SwitchPermit) throws(CenariusError) -> T) throws(CenariusError) -> T? {
        let lock = try WriterLock(path: layout.releaseLock, timeout: 10, purpose: "switch (holds)")
        defer { withExtendedLifetime(lock) {} }
        let at = now()
        var machine = ReleaseMachine(state: ReleaseStore(layout: layout).read(), policy: nil, current: GenerationStore(layout: layout).current()?.number)
        machine.holdsChanged(until: HoldStore(layout: layout).active(now: at).map(\.expires).max())
        guard let permit = machine.permitCommit(now: at) else { return nil }
        return try body(permit)
    }

    /// The machine as the cache records it. No `start`: the trial's policy is the daemon's, and
    /// the command line only answers the one event it brings.
    static func load(_ state: ReleaseState, settings: SyncSettings) -> ReleaseMachine {
        var machine = ReleaseMachine(state: state, policy: nil, current: GenerationStore(layout: settings.cache).current()?.number)
        let presetAvailable = ((try? settings.preset.table())?.count ?? 0) > 0
        _ = machine.observed(current: machine.current, committedAt: nil,
                             provenance: .init(sameAsPreset: false, presetAvailable: presetAvailable), now: FileSystem.now())
        return machine
    }
}
