import Foundation
import ResourceCache
import Testing
import TestOrigin

/// `ReleaseMachine` driven by thousands of random interleavings of every event the daemon feeds
/// it — commits (its own and other processes'), reads of the `current` link, `ready`/`confirm`,
/// deadlines (current and stale), health results, operators' rollbacks, the writer lock being
/// granted to a waiting switch (or the switch failing), holds, garbage collection, restarts with
/// a switch half made — against a model of the cache, checking the invariants after each event.
/// A failure prints the seed; `CENARIUS_SEED=<seed>` replays it.
@Suite struct ReleaseMachineInterleavingTests {
    static let sequences = 5000
    static let eventsPerSequence = 80

    /// TestOrigin's seeded generator, with the two draws the sequences use.
    struct Random {
        var generator: SplitMix
        init(state: UInt64) { generator = SplitMix(seed: state) }
        mutating func below(_ n: Int) -> Int { min(n - 1, Int(generator.next() * Double(n))) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    /// The cache as the machine's callers see it.
    struct World {
        var link: Int?
        var kept: Set<Int> = []
        var committedAt: [Int: Double] = [:]
        var next = 1
        var holdsUntil: Double?
        var now: Double = 1000
        /// Every generation a switch back left (the disk's truth, kept apart from the machine's).
        var failed: Set<Int> = []
        var saved = ReleaseState()
    }

    @Test func everyInterleavingKeepsTheInvariants() throws {
        let base = ProcessInfo.processInfo.environment["CENARIUS_SEED"].flatMap(UInt64.init) ?? 0x5EED_C0DE
        var events = 0
        for sequence in 0..<Self.sequences {
            let seed = base &+ UInt64(sequence)
            let (count, problem) = run(seed: seed)
            events += count
            if let problem {
                Issue.record("seed \(seed) (CENARIUS_SEED=\(seed)): \(problem)")
                return
            }
        }
        print("ReleaseMachine: \(Self.sequences) random sequences, \(events) events, every invariant held (base seed \(base))")
    }

    /// One sequence; the number of events and the first broken invariant, if any.
    func run(seed: UInt64) -> (Int, String?) {
        var random = Random(state: seed)
        let policies: [ReleaseMachine.Policy?] = [
            .init(confirmTimeout: 60, healthCheck: false), .init(confirmTimeout: 60, healthCheck: true), nil,
        ]
        let policy = policies[random.below(policies.count)]
        let presetAvailable = random.chance(85)
        var world = World()
        var machine = ReleaseMachine(state: ReleaseState(), policy: policy)
        var pending: ReleaseState.RollbackRecord?
        var log: [String] = []

        func provenance() -> ReleaseMachine.Provenance { .init(sameAsPreset: false, presetAvailable: presetAvailable) }
        func holdActive() -> Bool { (world.holdsUntil ?? 0) > world.now }
        func take(_ actions: [ReleaseMachine.Action]) {
            for action in actions {
                if case .switchBack(let record) = action { pending = record }
                if case .retry(let record) = action {
                    // The supervisor tries again after a pause.
                    take(machine.retryFailedTrial(record, now: world.now))
                }
            }
        }
        func observe() {
            take(machine.observed(current: world.link, committedAt: world.link.flatMap { world.committedAt[$0] },
                                  provenance: provenance(), now: world.now))
        }
        func check(_ event: String) -> String? {
            log.append(event)
            world.saved = machine.state
            var problems = machine.violations()
            if let link = world.link, world.failed.contains(link) { problems.append("failed generation \(link) is current on disk") }
            if let to = pending?.to, world.failed.contains(to) { problems.append("a switch back to failed generation \(to) is pending") }
            guard problems.isEmpty else { return problems.joined(separator: "; ") + " after " + log.suffix(12).joined(separator: ", ") }
            return nil
        }

        take(machine.start(current: nil, committedAt: nil, provenance: provenance(), now: world.now))
        for step in 0..<Self.eventsPerSequence {
            let event: String
            switch random.below(13) {
            case 0, 1:
                // A sync (the daemon's or a `sync` process) commits, unless a hold is active at the
                // switch (checked under the holds' lock); the daemon may hear of it only later.
                guard !holdActive() else { event = "commit held"; break }
                let number = world.next
                world.next += 1
                world.link = number
                world.kept.insert(number)
                world.committedAt[number] = world.now
                event = "commit \(number)"
                if random.chance(50) { observe() }
            case 2:
                observe()
                event = "observe"
            case 3:
                // ready / confirm: from the page of some generation.
                let candidates = [world.link ?? 0, (world.link ?? 1) - 1, machine.state.trial?.generation ?? 0, machine.current ?? 0]
                let generation = candidates[random.below(candidates.count)]
                observe()
                let (answer, actions) = machine.confirm(generation)
                take(actions)
                event = "confirm \(generation) → \(answer)"
            case 4:
                if let trial = machine.state.trial {
                    world.now = max(world.now, trial.deadline)
                    observe()
                    take(machine.deadlineReached(trial.generation, now: world.now))
                    event = "deadline \(trial.generation)"
                } else {
                    let stale = random.below(world.next + 1)
                    take(machine.deadlineReached(stale, now: world.now + 1000))
                    event = "stale deadline \(stale)"
                }
            case 5:
                let generation = random.chance(70) ? machine.state.trial?.generation ?? 0 : random.below(world.next + 1)
                let passed = random.chance(50)
                observe()
                take(machine.healthChecked(generation, passed: passed, detail: "", now: world.now))
                event = "health \(generation) \(passed)"
            case 6:
                observe()
                machine.holdsChanged(until: world.holdsUntil)
                let answer = machine.rollbackRequested(kept: world.kept, now: world.now)
                if case .switching(let record) = answer {
                    pending = record
                    if holdActive() { return (step, "an operator's rollback was decided while a hold is active") }
                    if let to = record.to, !world.kept.contains(to) { return (step, "rollback to generation \(to), which is not kept") }
                }
                event = "rollback → \(answer)"
            case 7, 8:
                // The writer lock is granted to the waiting switch (or making it fails).
                guard let record = pending else { event = "no switch waiting"; break }
                pending = nil
                let outcome: ReleaseMachine.SwitchOutcome
                if random.chance(10) {
                    outcome = .failed("disk full")
                } else if world.link == record.from {
                    world.link = record.to
                    world.failed.insert(record.from)
                    outcome = .made
                } else {
                    outcome = .superseded
                    observe()
                }
                take(machine.switchFinished(record, outcome))
                event = "switch \(record.from)→\(record.to.map(String.init) ?? "preset") \(outcome)"
            case 9:
                if holdActive() {
                    world.holdsUntil = nil
                    event = "hold released"
                } else {
                    world.holdsUntil = world.now + Double(1 + random.below(200))
                    event = "hold"
                }
            case 10:
                world.now += Double(random.below(90))
                event = "time \(world.now)"
            case 11:
                // Garbage collection spares the current, confirmed, on-trial and switching-to ones.
                let pinned = Set([world.link, machine.state.confirmed, machine.state.trial?.generation, pending?.to, pending?.from].compactMap { $0 })
                if let victim = world.kept.subtracting(pinned).sorted().first {
                    world.kept.remove(victim)
                    event = "collect \(victim)"
                } else {
                    event = "collect nothing"
                }
            default:
                // A restart: a switch under way may have been made on disk before the state was written.
                if let record = pending, random.chance(50), world.link == record.from {
                    world.link = record.to
                    world.failed.insert(record.from)
                }
                pending = nil
                machine = ReleaseMachine(state: world.saved, policy: policy)
                take(machine.start(current: world.link, committedAt: world.link.flatMap { world.committedAt[$0] },
                                   provenance: provenance(), now: world.now))
                event = "restart"
            }
            if let problem = check(event) { return (step + 1, problem) }
        }
        // Quiet at the end: the waiting switch is made, the link read; machine and disk agree.
        if let record = pending {
            let outcome: ReleaseMachine.SwitchOutcome = world.link == record.from ? .made : .superseded
            if outcome == .made {
                world.link = record.to
                world.failed.insert(record.from)
            }
            observe()
            take(machine.switchFinished(record, outcome))
        }
        observe()
        if machine.current != world.link { return (Self.eventsPerSequence, "the machine says \(String(describing: machine.current)) is current, the disk \(String(describing: world.link))") }
        return (Self.eventsPerSequence, check("quiet"))
    }
}
