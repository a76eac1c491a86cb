import Synchronization
package import Tracing

/// A sampled span being recorded. The tracing API hands spans across tasks and threads (a sync
/// runs on a thread of its own, its downloads on others), so its state is behind a mutex; ending
/// it hands one `FinishedSpan` to the queue, once.
package final class RecordingSpan: Span {
    package let context: InstrumentationContext
    private let kind: SpanKind
    private let start: UInt64
    private let parentSpanID: [UInt8]?
    private let finish: @Sendable (FinishedSpan) -> Void
    private let state: Mutex<State>

    private struct State {
        var name: String
        var attributes = SpanAttributes()
        var events: [(name: String, time: UInt64, attributes: [(key: String, value: SpanAttribute)])] = []
        var status: SpanStatus?
        var ended = false
    }

    init(name: String, context: InstrumentationContext, parentSpanID: [UInt8]?, kind: SpanKind, start: UInt64,
         finish: @escaping @Sendable (FinishedSpan) -> Void) {
        self.context = context
        self.kind = kind
        self.start = start
        self.parentSpanID = parentSpanID
        self.finish = finish
        state = Mutex(State(name: name))
    }

    package var isRecording: Bool { state.withLock { !$0.ended } }

    package var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { if !$0.ended { $0.name = newValue } } }
    }

    package var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { if !$0.ended { $0.attributes = newValue } } }
    }

    package func setStatus(_ status: SpanStatus) {
        state.withLock { if !$0.ended { $0.status = status } }
    }

    package func addEvent(_ event: SpanEvent) {
        state.withLock {
            if !$0.ended { $0.events.append((event.name, event.nanosecondsSinceEpoch, event.attributes.sortedPairs)) }
        }
    }

    /// Recorded as OTLP's `exception` event with the error's type and message: errors here are
    /// `CenariusError`s, whose descriptions never hold a secret (they are printed to users too).
    package func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        var attributes = attributes
        attributes["exception.type"] = SpanAttribute.string(String(describing: type(of: error)))
        attributes["exception.message"] = SpanAttribute.string(String(describing: error))
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: attributes))
    }

    /// Links are not recorded: nothing in cenariusd makes them.
    package func addLink(_ link: SpanLink) {}

    package func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let ended: State? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return state
        }
        guard let ended, let spanContext = context.spanContext else { return }
        let code: Int
        switch ended.status?.code {
        case .ok?: code = 1
        case .error?: code = 2
        case nil: code = 0
        }
        finish(FinishedSpan(name: ended.name, context: spanContext, parentSpanID: parentSpanID, kind: kind, start: start,
                            end: instant().nanosecondsSinceEpoch, attributes: ended.attributes.sortedPairs,
                            events: ended.events, statusCode: code, statusMessage: ended.status?.message))
    }
}
