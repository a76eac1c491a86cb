import Logging
import ResourceCache
import RouteSync

/// Runs the trial of every switch (G9): feeds `TrialMachine` with commits, confirmations,
/// health results and deadlines, and performs what it answers — timers, health checks, the
/// rollback on the writer lock, the events, metrics, logs and the `--on-switch` command.
///
/// The state lives in the cache (`ReleaseStore`), read and written on every transition, so
/// that `cenariusd confirm` and `cenariusd rollback` from a shell act on the same state, and a
/// daemon killed mid-trial resumes it.
actor ReleaseSupervisor {
    private var settings: SyncSettings
    private let options: TrialOptions
    private let policy: TrialMachine.Policy?
    private let events: EventHub
    private let metrics: DaemonMetrics
    private let logger: Logger
    nonisolated let view = ReleaseView()
    /// The `current` link moved: the request path must read it again.
    private let switched: @Sendable () -> Void
    private var timer: Task<Void, Never>?
    private var health: (task: Task<Void, Never>, cancel: CancelToken)?

    init(settings: SyncSettings, options: TrialOptions, events: EventHub, metrics: DaemonMetrics,
         logger: Logger, switched: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.options = options
        policy = options.policy
        self.events = events
        self.metrics = metrics
        self.logger = logger
        self.switched = switched
        view.update { $0.trialsEnabled = options.policy != nil }
    }

    private var layout: CacheLayout { settings.cache }

    /// SIGHUP: new settings (the cache folder stays, the daemon's lock is on it).
    func reload(_ settings: SyncSettings) {
        self.settings = settings
    }
    private var store: ReleaseStore { ReleaseStore(layout: layout) }

    private func currentGeneration() -> Generation? { GenerationStore(layout: layout).current() }

    private func provenance(of generation: Generation?) -> TrialMachine.Provenance {
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
        let now = FileSystem.now()
        await step { $0.start(current: current?.number, committedAt: committedAt, provenance: provenance, now: now) }
    }

    /// A sync committed `generation` (the switch already happened).
    func committed(_ generation: Int, previous: Int?, reason: String) async {
        let now = FileSystem.now()
        let provenance = self.provenance(of: GenerationStore(layout: layout).generation(generation))
        let actions = persist { $0.committed(generation, provenance: provenance, now: now) }
        let trial = actions.contains { if case .startTrial = $0 { true } else { false } }
        var fields: [String: EventField] = ["previous": .optional(previous), "trial": .bool(trial), "reason": .string(reason)]
        if trial, let deadline = view.current.state.trial?.deadline { fields["deadline"] = .double(deadline) }
        events.publish("committed", generation: generation, fields, now: now)
        runOnSwitch(generation: generation, previous: previous, reason: "committed")
        await perform(actions)
    }

    /// `POST /_cenarius/ready`: the app confirms the generation it was loaded from.
    func confirm(_ generation: Int) async throws(CenariusError) -> TrialMachine.ConfirmAnswer {
        let current = currentGeneration()?.number
        let (answer, actions) = try store.update { state throws(CenariusError) in
            var machine = TrialMachine(state: state, policy: policy)
            let result = machine.confirm(generation, current: current)
            state = machine.state
            return result
        }
        refreshView()
        await perform(actions)
        return answer
    }

    /// A shell changed the state (`cenariusd confirm` or `rollback` then signal the daemon).
    func reloadFromDisk() async {
        let before = view.current.state
        let after = store.read()
        refreshView()
        if let trial = before.trial, after.trial == nil, after.confirmed == trial.generation {
            await perform([.confirmed(generation: trial.generation)])
        }
        if let record = after.lastRollback, record != before.lastRollback {
            cancelTrialWork()
            announce(record)
        }
        if after.trial == nil { cancelTrialWork() }
    }

    private func deadlineReached(_ generation: Int) async {
        let now = FileSystem.now()
        await step { $0.deadlineReached(generation, now: now) }
    }

    private func healthChecked(_ generation: Int, _ result: HealthCheck.Result) async {
        let now = FileSystem.now()
        if result.passed {
            logger.info("health check passed", metadata: ["generation": "\(generation)", "detail": "\(result.detail)"])
        } else {
            logger.warning("health check failed", metadata: ["generation": "\(generation)", "detail": "\(result.detail)"])
        }
        await step { $0.healthChecked(generation, passed: result.passed, detail: result.detail, now: now) }
    }

    /// One transition. A rollback it asks for is made before the state records it, so that a
    /// crash in between leaves the trial to be decided again at the next start.
    private func step(_ change: @escaping @Sendable (inout TrialMachine) -> [TrialMachine.Action]) async {
        var preview = TrialMachine(state: store.read(), policy: policy)
        let planned = change(&preview)
        if let record = planned.compactMap({ if case .rollBack(let record) = $0 { record } else { nil } }).first {
            await rollBack(record, change)
        } else {
            await perform(persist(change))
        }
    }

    /// A trial failed: switch back first (on the writer lock, behind any sync in flight), then
    /// record it. If the switch cannot be made now, the trial stays and it is tried again.
    private func rollBack(_ record: ReleaseState.RollbackRecord, _ decide: @escaping @Sendable (inout TrialMachine) -> [TrialMachine.Action]) async {
        let generation = record.from
        let settings = settings
        let deadline = store.read().trial.flatMap { $0.generation == generation ? $0.deadline : nil }
        if record.to == nil, ((try? settings.preset.table())?.count ?? 0) == 0 {
            // Nothing was ever confirmed and no preset ships a table: rolling back would leave
            // nothing to serve, which is worse than an unconfirmed release.
            logger.warning("trial failed, but there is nothing to roll back to (no confirmed generation, no preset table); the generation stays until confirmed", metadata: [
                "generation": "\(generation)", "reason": "\(record.reason.rawValue)", "detail": "\(record.detail ?? "-")",
            ])
            cancelTrialWork()
            return
        }
        let switched: Result<Bool, CenariusError> = await onThread("cenariusd-rollback") {
            Result { () throws(CenariusError) in try Rollback.failedTrial(settings, from: record.from, to: record.to) }
        }
        switch switched {
        case .failure(let error):
            logger.error("rollback failed; trying again in 5 s", metadata: ["generation": "\(generation)", "message": "\(error.message)"])
            timer?.cancel()
            timer = Task { [weak self] in
                try? await Task.sleep(for: .seconds(5))
                guard !Task.isCancelled else { return }
                await self?.step(decide)
            }
            return
        case .success(false):
            // A newer release replaced it meanwhile; that one has a trial of its own.
            logger.info("trial superseded before its rollback", metadata: ["generation": "\(generation)"])
            return
        case .success(true):
            break
        }
        _ = persist(decide)
        cancelTrialWork()
        announce(record, deadline: deadline)
    }

    /// Everything a person or a program watches hears of a rollback.
    private func announce(_ record: ReleaseState.RollbackRecord, deadline: Double? = nil) {
        view.update {
            $0.rolledBack[record.from] = record
            $0.rollbacks += 1
        }
        switched()
        metrics.recordRollback(record.reason)
        var metadata: Logger.Metadata = [
            "from": "\(record.from)", "to": "\(record.to.map(String.init) ?? "preset")", "reason": "\(record.reason.rawValue)",
            "detail": "\(record.detail ?? "-")",
        ]
        var fields: [String: EventField] = [
            "from": .int(record.from), "to": .optional(record.to), "reason": .string(record.reason.rawValue),
            "detail": record.detail.map { .string($0) } ?? .null,
        ]
        if let deadline {
            // How long after its deadline the switch back was made (the trial's own latency).
            let late = FileSystem.now() - deadline
            if late >= 0 { metadata["after-deadline"] = "\(Whole.clamped(late * 1000)) ms" }
            fields["deadline"] = .double(deadline)
        }
        logger.error("rolled back", metadata: metadata)
        events.publish("rolled-back", generation: record.to ?? 0, fields, now: record.at)
        runOnSwitch(generation: record.to ?? 0, previous: record.from, reason: record.reason.rawValue)
    }

    private func perform(_ actions: [TrialMachine.Action]) async {
        for action in actions {
            switch action {
            case .startTrial(let trial, let previous, let resumed):
                arm(trial)
                logger.notice(resumed ? "trial resumed" : "trial started", metadata: [
                    "generation": "\(trial.generation)", "fallback": "\(previous.map(String.init) ?? "preset")",
                    "seconds-left": "\(Whole.clamped(trial.deadline - FileSystem.now()))",
                ])
            case .runHealthCheck(let generation):
                startHealthCheck(generation)
            case .confirmed(let generation):
                cancelTrialWork()
                if policy != nil {
                    logger.notice("confirmed", metadata: ["generation": "\(generation)"])
                    events.publish("confirmed", generation: generation)
                }
            case .rollBack:
                // Made by `step` before the state is written; never reaches here.
                break
            }
        }
    }

    private func arm(_ trial: ReleaseState.Trial) {
        timer?.cancel()
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
        guard let deadline = view.current.state.trial?.deadline else { return }
        let check = HealthCheck(options: options, transfer: settings.transfer)
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

    /// Applies one transition to the stored state (read, change, write under its lock).
    private func persist(_ change: (inout TrialMachine) -> [TrialMachine.Action]) -> [TrialMachine.Action] {
        let policy = policy
        let actions: [TrialMachine.Action]
        do {
            actions = try store.update { state in
                var machine = TrialMachine(state: state, policy: policy)
                let actions = change(&machine)
                state = machine.state
                return actions
            }
        } catch {
            // The switch itself is already made; a state that cannot be written is reported,
            // and the next start reconciles it with `current`.
            logger.error("cannot record the release state", metadata: ["message": "\(error.message)"])
            var machine = TrialMachine(state: store.read(), policy: policy)
            actions = change(&machine)
        }
        refreshView()
        return actions
    }

    private func refreshView() {
        let state = store.read()
        view.update { $0.state = state }
        metrics.recordRelease(state)
    }

    private func runOnSwitch(generation: Int, previous: Int?, reason: String) {
        guard let command = options.onSwitch else { return }
        let hook = ShellCommand(command: command, environment: [
            "CENARIUS_GENERATION": String(generation), "CENARIUS_PREVIOUS": previous.map(String.init) ?? "", "CENARIUS_REASON": reason,
        ])
        let logger = logger
        Task {
            let outcome = await onThread("cenariusd-on-switch") { hook.run(timeout: 300) }
            if !outcome.succeeded {
                logger.warning("--on-switch command failed (the switch stands)", metadata: [
                    "generation": "\(generation)", "reason": "\(reason)", "outcome": "\(outcome.description)",
                ])
            }
        }
    }
}
