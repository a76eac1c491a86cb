import Logging
import ResourceCache
import RouteSync

/// The one owner of the release state (G9, G10) in the daemon: every caller — the sync's commit,
/// the trial's deadline, the health check, `POST /_cenarius/ready`, `POST /_cenarius/rollback`
/// (which `cenariusd confirm` and `rollback` use when this daemon runs), a restart, and a commit
/// made by another process — becomes an event of `ReleaseMachine`, and this actor carries out
/// the actions it returns: timers, health checks, the switch back on the writer lock, the events,
/// metrics, logs and the `--on-switch` command.
///
/// The machine's state is written to the cache (`release.json`, durably) after every transition
/// and before anything is announced, so that a daemon killed mid-trial resumes it. The `current`
/// link is read before every event and once a second, so a switch made by a `sync` or `resolve`
/// process is taken in as the commit it was (its trial starts now, not at the next restart).
actor ReleaseSupervisor {
    /// File work, never on Swift's shared pool (FileWork).
    nonisolated var unownedExecutor: UnownedSerialExecutor { FileWork.executor }
    private var settings: SyncSettings
    private var options: TrialOptions
    private let events: EventHub
    private let metrics: DaemonMetrics
    private let logger: Logger
    nonisolated let view = ReleaseView()
    /// The `current` link moved: the request path must read it again.
    private let switched: @Sendable () -> Void
    private var machine: ReleaseMachine
    private var timer: Task<Void, Never>?
    /// The daemon is stopping: no timer or health check is armed from here on.
    private var stopping = false
    private var health: (task: Task<Void, Never>, cancel: CancelToken)?

    /// The daemon stops: hooks and health commands still running are killed with their children.
    nonisolated func stop() {
        hooks.groups.killAll()
    }
    /// The reason of the daemon's own sync in flight, which names the commit it makes.
    private var syncReason: String?
    private var trace = TrialTrace()
    let hooks: HookRunner

    init(settings: SyncSettings, options: TrialOptions, events: EventHub, metrics: DaemonMetrics,
         logger: Logger, switched: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.options = options
        self.events = events
        self.metrics = metrics
        self.logger = logger
        self.switched = switched
        machine = ReleaseMachine(state: ReleaseStore(layout: settings.cache).read(), policy: options.policy)
        hooks = HookRunner(logger: logger)
        view.update { $0.trialsEnabled = options.policy != nil }
    }

    private var layout: CacheLayout { settings.cache }

    /// SIGHUP: new settings (the cache folder stays, the daemon's lock is on it) and trial
    /// options; a trial under way keeps its deadline, the next switch follows the new policy.
    func reload(_ settings: ReloadableSettings) {
        self.settings = settings.sync
        options = settings.trial
        machine.policy = options.policy
        view.update { $0.trialsEnabled = options.policy != nil }
    }

    private func currentGeneration() -> Generation? { GenerationStore(layout: layout).current() }

    private func provenance(of generation: Generation?) -> ReleaseMachine.Provenance {
        let preset = try? FileSystem.readFile(settings.preset.tablePath)
        let presetAvailable = ((try? settings.preset.table())?.count ?? 0) > 0
        let same = generation.flatMap { try? FileSystem.readFile($0.tablePath) }.map { $0 == preset } ?? false
        return .init(sameAsPreset: same, presetAvailable: presetAvailable)
    }

    /// At start: resume a trial with the time left, or roll back one whose deadline passed.
    func start() async {
        let current = currentGeneration()
        let committedAt = try? current?.meta().committedAt
        let provenance = self.provenance(of: current)
        let actions = machine.start(current: current?.number, committedAt: committedAt, provenance: provenance, now: FileSystem.now())
        save()
        await perform(actions)
    }

    /// The daemon's own sync begins: a commit seen until it ends is that sync's.
    func syncStarted(reason: String) {
        syncReason = reason
    }

    /// The daemon's sync ended (committed or not).
    func syncEnded() async {
        await observe()
        syncReason = nil
    }

    /// Reads the `current` link; a move this machine has not heard of is taken in now.
    func observe() async {
        let current = currentGeneration()
        guard current?.number != machine.current else { return }
        let previous = machine.current
        // This daemon's own switch back, made on its thread and seen here first.
        let own = machine.switching.map { $0.to == current?.number } ?? false
        let committedAt = try? current?.meta().committedAt
        let now = FileSystem.now()
        let actions = machine.observed(current: current?.number, committedAt: committedAt, provenance: provenance(of: current), now: now)
        save()
        switched()
        if let number = current?.number, number > (previous ?? 0) {
            let reason = syncReason ?? "external"
            let trial = actions.contains { if case .startTrial = $0 { true } else { false } }
            var fields: [String: EventField] = ["previous": .optional(previous), "trial": .bool(trial), "reason": .string(reason)]
            if trial, let deadline = machine.state.trial?.deadline { fields["deadline"] = .double(deadline) }
            events.publish("committed", generation: number, fields, now: now)
            runOnSwitch(generation: number, previous: previous, reason: "committed")
        } else if !own {
            logger.notice("the current generation was switched by another process", metadata: [
                "generation": "\(current.map { String($0.number) } ?? "preset")", "previous": "\(previous.map(String.init) ?? "preset")",
            ])
        }
        await perform(actions)
    }

    /// `POST /_cenarius/ready` (and `cenariusd confirm`): the app confirms the generation it was
    /// loaded from. A commit not yet taken in is taken in first, so a page of the new release
    /// confirms its trial instead of a trial starting after it.
    func confirm(_ generation: Int) async -> ReleaseMachine.ConfirmAnswer {
        await observe()
        let (answer, actions) = machine.confirm(generation)
        save()
        await perform(actions)
        return answer
    }

    /// `POST /_cenarius/rollback` (and `cenariusd rollback`): an operator's rollback, to the last
    /// confirmed generation. Answers once the switch is made (or why not).
    func rollback() async throws(CenariusError) -> Rollback.Result {
        await observe()
        machine.holdsChanged(until: HoldStore(layout: layout).active().map(\.expires).max())
        switch machine.rollbackRequested(kept: Rollback.kept(layout), now: FileSystem.now()) {
        case .refused(let error):
            throw error
        case .switching(let record):
            save()
            let outcome = await makeSwitch(record)
            switch outcome {
            case .made: return Rollback.Result(from: record.from, to: record.to)
            case .superseded: throw .notFound("generation \(record.from) was replaced by a newer release before the switch back")
            case .failed(let message): throw .storage(message)
            }
        }
    }

    /// SIGUSR1 (an older command line changed the cache): take in what moved.
    func reloadFromDisk() async {
        await observe()
    }

    private func deadlineReached(_ generation: Int) async {
        await observe()
        let actions = machine.deadlineReached(generation, now: FileSystem.now())
        save()
        await perform(actions)
    }

    private func healthChecked(_ generation: Int, _ result: HealthCheck.Result) async {
        if result.passed {
            logger.info("health check passed", metadata: ["generation": "\(generation)", "detail": "\(result.detail)"])
        } else {
            logger.warning("health check failed", metadata: ["generation": "\(generation)", "detail": "\(result.detail)"])
        }
        await observe()
        let actions = machine.healthChecked(generation, passed: result.passed, detail: result.detail, now: FileSystem.now())
        save()
        await perform(actions)
    }

    /// Makes a switch back the machine decided, on the writer lock (behind any sync in flight).
    /// Meanwhile the machine is in its `switching` state: a confirmation is answered busy, a
    /// commit that lands first supersedes the switch (which then finds `current` moved).
    private func makeSwitch(_ record: ReleaseState.RollbackRecord) async -> ReleaseMachine.SwitchOutcome {
        let settings = settings
        guard let permit = machine.permitSwitch(record) else { return .superseded }
        let outcome = await onThread("cenariusd-rollback") { Rollback.make(record, permit: permit, settings: settings) }
        if outcome == .made { switched() }
        // A commit made before the lock was ours is taken in first: it superseded this switch.
        if outcome == .superseded { await observe() }
        let actions = machine.switchFinished(record, outcome)
        save()
        switch outcome {
        case .made: break
        case .superseded: logger.info("switch back superseded by a newer release", metadata: ["generation": "\(record.from)"])
        case .failed(let message):
            logger.error("rollback failed", metadata: ["generation": "\(record.from)", "message": "\(message)"])
        }
        await perform(actions)
        return outcome
    }

    /// Everything a person or a program watches hears of a rollback.
    private func announce(_ record: ReleaseState.RollbackRecord) {
        view.update {
            $0.rolledBack[record.from] = record
            $0.rollbacks += 1
        }
        metrics.recordRollback(record.reason)
        var metadata: Logger.Metadata = [
            "from": "\(record.from)", "to": "\(record.to.map(String.init) ?? "preset")", "reason": "\(record.reason.rawValue)",
            "detail": "\(record.detail ?? "-")",
        ]
        var fields: [String: EventField] = [
            "from": .int(record.from), "to": .optional(record.to), "reason": .string(record.reason.rawValue),
            "detail": record.detail.map { .string($0) } ?? .null,
        ]
        if let trial = view.current.trialDeadlines[record.from], record.reason != .manual {
            // How long after its deadline the switch back was made (the trial's own latency).
            let late = FileSystem.now() - trial
            if late >= 0 { metadata["after-deadline"] = "\(Whole.clamped(late * 1000)) ms" }
            fields["deadline"] = .double(trial)
        }
        logger.error("rolled back", metadata: metadata)
        events.publish("rolled-back", generation: record.to ?? 0, fields, now: record.at)
        runOnSwitch(generation: record.to ?? 0, previous: record.from, reason: record.reason.rawValue)
    }

    private func perform(_ actions: [ReleaseMachine.Action]) async {
        for action in actions {
            switch action {
            case .startTrial(let trial, let previous, let resumed):
                trace.started(trial, previous: previous, resumed: resumed)
                arm(trial)
                view.update { $0.trialDeadlines[trial.generation] = trial.deadline }
                logger.notice(resumed ? "trial resumed" : "trial started", metadata: [
                    "generation": "\(trial.generation)", "fallback": "\(previous.map(String.init) ?? "preset")",
                    "seconds-left": "\(Whole.clamped(trial.deadline - FileSystem.now()))",
                ])
            case .runHealthCheck(let generation):
                startHealthCheck(generation)
            case .confirmed(let generation):
                trace.confirmed(generation)
                cancelTrialWork()
                if machine.policy != nil {
                    logger.notice("confirmed", metadata: ["generation": "\(generation)"])
                    events.publish("confirmed", generation: generation)
                }
            case .switchBack(let record):
                _ = await makeSwitch(record)
            case .rolledBack(let record):
                trace.rolledBack(record)
                announce(record)
            case .retry(let record):
                logger.error("trying the switch back again in 5 s", metadata: ["generation": "\(record.from)"])
                timer?.cancel()
                guard !stopping else { continue }
                timer = Task { [weak self] in
                    try? await Task.sleep(for: .seconds(5))
                    guard !Task.isCancelled else { return }
                    await self?.retry(record)
                }
            case .nothingToRollBackTo(let record):
                // Nothing was ever confirmed and no preset ships a table: rolling back would leave
                // nothing to serve, which is worse than an unconfirmed release.
                logger.warning("trial failed, but there is nothing to roll back to (no confirmed generation, no preset table); the generation stays until confirmed", metadata: [
                    "generation": "\(record.from)", "reason": "\(record.reason.rawValue)", "detail": "\(record.detail ?? "-")",
                ])
            case .endTrialWork:
                cancelTrialWork()
            }
        }
    }

    /// Graceful shutdown: the trial's timer, a retried switch back and a health check end now
    /// rather than fire into a daemon that is stopping; a restart resumes the trial with the time
    /// left (`start`), as after a crash.
    func shutdown() {
        stopping = true
        trace.end("daemon stopped")
        cancelTrialWork()
    }

    private func retry(_ record: ReleaseState.RollbackRecord) async {
        await observe()
        let actions = machine.retryFailedTrial(record, now: FileSystem.now())
        save()
        await perform(actions)
    }

    private func arm(_ trial: ReleaseState.Trial) {
        timer?.cancel()
        guard !stopping else { return }
        let generation = trial.generation
        let wait = max(0, trial.deadline - FileSystem.now())
        timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Whole.sleepMilliseconds(wait) + 1))
            guard !Task.isCancelled else { return }
            await self?.deadlineReached(generation)
        }
    }

    private func startHealthCheck(_ generation: Int) {
        health?.cancel.cancel()
        health?.task.cancel()
        guard !stopping, let deadline = machine.state.trial?.deadline else { return }
        let check = HealthCheck(options: options, transfer: settings.transfer, groups: hooks.groups)
        let cancel = CancelToken()
        let task = Task { [weak self] in
            let result = await onThread("cenariusd-health") { check.run(generation: generation, deadline: deadline, cancel: cancel) }
            guard !Task.isCancelled else { return }
            await self?.healthChecked(generation, result)
        }
        health = (task, cancel)
    }

    private func cancelTrialWork() {
        timer?.cancel()
        timer = nil
        health?.cancel.cancel()
        health?.task.cancel()
        health = nil
    }

    /// Writes the machine's state (durably, under `release.lock`) before anything is announced,
    /// and shows it to the request path.
    private func save() {
        let state = machine.state
        do {
            // The machine's fields; the records others wrote since (a hold, a refused table) stay.
            try ReleaseStore(layout: layout).update { $0.takeMachine(state) }
        } catch {
            // The switch itself is already made; a state that cannot be written is reported,
            // and the next start reconciles it with `current`.
            logger.error("cannot record the release state", metadata: ["message": "\(error.message)"])
        }
        view.update { $0.state = state }
        metrics.recordRelease(state)
    }

    private func runOnSwitch(generation: Int, previous: Int?, reason: String) {
        guard let command = options.onSwitch else { return }
        hooks.run(ShellCommand(command: command, environment: [
            "CENARIUS_GENERATION": String(generation), "CENARIUS_PREVIOUS": previous.map(String.init) ?? "", "CENARIUS_REASON": reason,
        ]), timeout: options.hookTimeout, label: "--on-switch", metadata: ["generation": "\(generation)", "reason": "\(reason)"])
    }
}
