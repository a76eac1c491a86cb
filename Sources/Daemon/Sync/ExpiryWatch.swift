import Logging
import ResourceCache
import RouteSync
import Synchronization

/// Says once per expiry of the table in force, by a `table-expired` event and a log line, that the signed table in
/// force has expired (G8, `routes --expires`): the device keeps serving it, but a fleet held on an
/// old release by a replaying mirror or a frozen CDN must be visible.
final class ExpiryWatch: Sendable {
    private let settings: SettingsHolder
    private let events: EventHub
    private let logger: Logger
    /// The generation and expiry announced last: a table re-signed with a later expiry that then
    /// expires again is announced again.
    private let announced = Mutex<[Int64]>([])

    init(settings: SettingsHolder, events: EventHub, logger: Logger) {
        self.settings = settings
        self.events = events
        self.logger = logger
    }

    func check() {
        let settings = settings.current.sync
        guard let current = GenerationStore(layout: settings.cache).current(), let meta = try? current.meta(),
              let expires = meta.signatureExpires, Double(expires) <= settings.rollout.now() else { return }
        let key = [Int64(current.number), expires]
        let first = announced.withLock { last in
            defer { last = key }
            return last != key
        }
        guard first else { return }
        let message = "the signed table in force (generation \(current.number)) expired at \(UTCTime.text(Double(expires))) and the remote offers nothing newer; still serving it"
        logger.warning("\(message)")
        events.publish("table-expired", generation: current.number, ["expires": .int(Int(expires)), "message": .string(message)])
    }
}
