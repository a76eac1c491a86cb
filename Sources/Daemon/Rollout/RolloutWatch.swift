import Logging
import ResourceCache
import RouteSync
import ReportHeader

/// The daemon's side of staged adoption (G10): holds with their expiry, the `deferred`, `held`
/// and `released` events, and a sync at this device's own moment in a rollout rather than at the
/// next periodic poll.
actor RolloutWatch {
    /// File work, never on Swift's shared pool (FileWork).
    nonisolated var unownedExecutor: UnownedSerialExecutor { FileWork.executor }
    private let layout: CacheLayout
    private let settings: SettingsHolder
    /// Read at each use: SIGHUP may change the device's id, native version or clock.
    private var rollout: RolloutSettings { settings.current.sync.rollout }
    private let events: EventHub
    private let logger: Logger
    private var coordinator: SyncCoordinator?
    private var expiry: Task<Void, Never>?
    private var moment: Task<Void, Never>?
    /// The daemon is stopping: no timer is armed from here on.
    private var stopping = false
    /// The last deferral announced, so a poll that finds the same wait says nothing new.
    private var announced: SyncReport.Deferral?

    init(settings: SettingsHolder, events: EventHub, logger: Logger) {
        layout = settings.current.sync.cache
        self.settings = settings
        self.events = events
        self.logger = logger
    }

    private var holds: HoldStore { HoldStore(layout: layout) }

    /// Holds kept from before a restart keep their expiry.
    func start(coordinator: SyncCoordinator) {
        self.coordinator = coordinator
        armExpiry()
    }

    func addHold(ttl: Double, reason: String) throws(CenariusError) -> Hold {
        let hold = try holds.add(ttl: ttl, reason: reason)
        logger.notice("hold", metadata: ["id": "\(hold.id)", "ttl": "\(ttl)", "reason": "\(reason)"])
        events.publish("held", generation: currentGeneration(), [
            "id": .string(hold.id), "reason": .string(reason), "expires": .double(hold.expires), "holds": .int(holds.active().count),
            "why": .string(WhyReason.held.rawValue),
        ])
        armExpiry()
        return hold
    }

    /// false: no active hold has that id.
    func removeHold(_ id: String) async throws(CenariusError) -> Bool {
        guard try holds.remove(id) else { return false }
        await released([id], why: "deleted")
        return true
    }

    /// After every sync: announce a new or changed wait, and come back at this device's moment.
    func afterSync(_ report: SyncReport) {
        guard let deferral = report.deferred, report.outcome == .deferred || report.outcome == .held else {
            announced = nil
            moment?.cancel()
            return
        }
        if deferral != announced {
            announced = deferral
            var fields: [String: EventField] = [
                "release": .string(deferral.release), "reason": .string(deferral.detail), "waitsFor": .string(deferral.reason),
                "at": deferral.at.map { .double($0) } ?? .null, "why": .string(Why.waitingReason(deferral.reason).rawValue),
            ]
            if let place = deferral.place { fields["place"] = .double(place) }
            events.publish("deferred", generation: report.generation, fields)
            logger.notice("release deferred", metadata: [
                "release": "\(deferral.release)", "waits-for": "\(deferral.reason)", "detail": "\(deferral.detail)",
                "at": "\(deferral.at.map(Whole.text) ?? "-")",
            ])
        }
        moment?.cancel()
        guard !stopping else { return }
        // A rollout moment, or an install window that opens (install policies): a sync then, not a poll interval later.
        guard ["time", "download-window", "switch-window"].contains(deferral.reason), let at = deferral.at else { return }
        // The moment is on the rollout's clock; the wait is the same length on the real one.
        let wait = max(0, at - rollout.now())
        moment = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Whole.sleepMilliseconds(wait) + 50))
            guard !Task.isCancelled else { return }
            await self?.requestSync(deferral.reason == "time" ? "rollout" : "window")
        }
    }

    /// Graceful shutdown: a hold's expiry and a rollout's moment end now rather than ask a
    /// stopping daemon for a sync; a restart arms them again from `holds.json` and the next poll.
    func shutdown() {
        stopping = true
        expiry?.cancel()
        moment?.cancel()
    }

    private func armExpiry() {
        expiry?.cancel()
        guard !stopping else { return }
        guard let next = holds.active().map(\.expires).min() else { return }
        let wait = max(0, next - FileSystem.now())
        expiry = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Whole.sleepMilliseconds(wait) + 10))
            guard !Task.isCancelled else { return }
            await self?.expired()
        }
    }

    private func expired() async {
        await released([], why: "expired")
    }

    /// A hold ended: tell the streams; when it was the last, the waiting release switches now.
    private func released(_ ids: [String], why: String) async {
        let left = holds.active().count
        events.publish("released", generation: currentGeneration(), [
            "ids": .string(ids.joined(separator: ",")), "why": .string(why), "holds": .int(left),
        ])
        logger.notice("hold released", metadata: ["why": "\(why)", "holds-left": "\(left)"])
        armExpiry()
        if left == 0, PendingStore(layout: layout).record()?.reason == "hold" { await requestSync("hold") }
    }

    private func requestSync(_ reason: String) async {
        _ = await coordinator?.request(reason: reason)
    }

    private func currentGeneration() -> Int? { GenerationStore(layout: layout).current()?.number }
}
