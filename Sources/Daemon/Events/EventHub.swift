import FoundationEssentials
import NIOCore
import RouteSync
import Transport
import Synchronization

/// The daemon's events (`GET /_cenarius/events`): published once, encoded once, and pushed to
/// every connected stream. The last `keep` events stay for clients that reconnect with
/// `Last-Event-ID`.
///
/// Ids start at the daemon's start time in milliseconds and count up, so an id a client kept
/// from an earlier run of the daemon is older than every event of this run and gets them all.
final class EventHub: Sendable {
    typealias Sink = @Sendable (ByteBuffer) -> Void

    private struct State {
        var nextID: Int
        var kept: [(id: Int, bytes: ByteBuffer)] = []
        var sinks: [Int: Sink] = [:]
        var nextToken = 0
        var observers: [Observer] = []
    }

    /// Sees each event as published (name and data, `generation` and `time` included): the
    /// reporter (`--report-url`). Called under the hub's lock, in id order; it must only enqueue.
    typealias Observer = @Sendable (_ name: String, _ data: [String: EventField]) -> Void

    private let state: Mutex<State>
    let keep: Int

    init(keep: Int = 256, firstID: Int = Whole.clamped(FileSystem.now() * 1000)) {
        self.keep = keep
        state = Mutex(State(nextID: firstID))
    }

    /// Sends `name` with `fields` (plus `generation` and `time`) to every stream; its id.
    @discardableResult
    func publish(_ name: String, generation: Int?, _ fields: [String: EventField] = [:], now: Double = FileSystem.now()) -> Int {
        var data = fields
        data["generation"] = generation.map { .int($0) } ?? .null
        data["time"] = .double(now)
        let json = EventField.encode(data)
        return state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            let bytes = ByteBuffer(string: "id: \(id)\nevent: \(name)\ndata: \(json)\n\n")
            state.kept.append((id, bytes))
            if state.kept.count > keep { state.kept.removeFirst(state.kept.count - keep) }
            // Under the lock, so every stream sees events in id order; a sink only enqueues.
            for sink in state.sinks.values { sink(bytes) }
            for observer in state.observers { observer(name, data) }
            return id
        }
    }

    /// Registers a stream. With `lastEventID` (a reconnect) the kept events after it come back
    /// first, atomically with the registration, so none is lost or sent twice.
    func subscribe(after lastEventID: Int?, _ sink: @escaping Sink) -> (token: Int, missed: [ByteBuffer]) {
        state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            state.sinks[token] = sink
            let missed = lastEventID.map { last in state.kept.filter { $0.id > last }.map(\.bytes) } ?? []
            return (token, missed)
        }
    }

    func observe(_ observer: @escaping Observer) {
        state.withLock { $0.observers.append(observer) }
    }

    func unsubscribe(_ token: Int) {
        _ = state.withLock { $0.sinks.removeValue(forKey: token) }
    }

    var streams: Int { state.withLock { $0.sinks.count } }
}

/// One value in an event's JSON `data:` line.
enum EventField: Sendable, Encodable, Equatable {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
    case null

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// One line of JSON (SSE data must not contain a newline), keys sorted.
    static func encode(_ fields: [String: EventField]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(fields)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func optional(_ value: Int?) -> EventField { value.map { .int($0) } ?? .null }
}
