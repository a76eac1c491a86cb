import NIOCore
import Synchronization

/// At most `maximum` open connections (`--max-connections`). Past it, the connection that has
/// gone longest without sending a request is asked to close, as a graceful shutdown asks every
/// connection (`ChannelShouldQuiesceEvent`): an idle one closes at once, a busy one after its
/// reply, an event stream ends (its client reconnects with Last-Event-ID). So idle connections
/// that anyone on the machine can open never lock out a client that needs an answer, and the
/// daemon's descriptors stay well under its limit (G5).
final class ConnectionLimit: Sendable {
    let maximum: Int
    private struct Entry {
        let channel: any Channel
        let slot: ConnectionSlot
        var shed = false
    }
    private let open = Mutex<[ObjectIdentifier: Entry]>([:])

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// Registers a connection just accepted; sheds the stalest one when there are too many.
    func admit(_ channel: any Channel) -> ConnectionSlot {
        let slot = ConnectionSlot()
        let id = ObjectIdentifier(channel)
        let victims = open.withLock { open in
            open[id] = Entry(channel: channel, slot: slot)
            let live = open.values.reduce(0) { $0 + ($1.shed ? 0 : 1) }
            return live > maximum ? Self.markStalest(1, in: &open, sparing: id) : []
        }
        channel.closeFuture.whenComplete { [self] _ in _ = open.withLock { $0.removeValue(forKey: id) } }
        Self.quiesce(victims)
        return slot
    }

    /// The descriptors ran out (more connections allowed than the process may open, or other
    /// work holds them): the `count` stalest connections go, so a client that needs an answer
    /// gets in once accepting resumes.
    func shed(_ count: Int) {
        Self.quiesce(open.withLock { Self.markStalest(count, in: &$0, sparing: nil) })
    }

    private static func markStalest(_ count: Int, in open: inout [ObjectIdentifier: Entry], sparing: ObjectIdentifier?) -> [any Channel] {
        let candidates = open.filter { !$0.value.shed && $0.key != sparing }
            .sorted { $0.value.slot.lastRequest < $1.value.slot.lastRequest }.prefix(count)
        for (key, _) in candidates { open[key]?.shed = true }
        return candidates.map(\.value.channel)
    }

    private static func quiesce(_ channels: [any Channel]) {
        for channel in channels {
            channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        }
    }

    var count: Int { open.withLock { $0.count } }
}

/// When a connection last sent a request: written by its event loop, read by `admit` on another.
final class ConnectionSlot: Sendable {
    private let last = Atomic<UInt64>(DispatchTimeNow.nanoseconds())

    var lastRequest: UInt64 { last.load(ordering: .relaxed) }

    func touch() { last.store(DispatchTimeNow.nanoseconds(), ordering: .relaxed) }
}

/// The monotonic clock in nanoseconds, without Foundation.
enum DispatchTimeNow {
    static func nanoseconds() -> UInt64 { UInt64(NIODeadline.now().uptimeNanoseconds) }
}
