package import Synchronization

/// Ended spans waiting for the exporter, in bounded memory: when the collector is down or slow
/// the oldest are dropped, and counted, so a device that never reaches its collector holds at most
/// `capacity` spans (a sync makes about a dozen). Drops are counted in the daemon's metrics
/// (`cenarius_trace_spans_dropped_total`).
package final class SpanQueue: Sendable {
    let capacity: Int
    private let state: Mutex<State>

    private struct State {
        var spans: [FinishedSpan] = []
        var dropped = 0
    }

    init(capacity: Int) {
        self.capacity = capacity
        state = Mutex(State())
    }

    func append(_ span: FinishedSpan) {
        state.withLock { state in
            if state.spans.count >= capacity {
                state.spans.removeFirst()
                state.dropped += 1
                Self.dropped(1)
            }
            state.spans.append(span)
        }
    }

    var count: Int { state.withLock { $0.spans.count } }
    var dropped: Int { state.withLock { $0.dropped } }

    /// Up to `limit` of the oldest, taken out for one export.
    func take(_ limit: Int) -> [FinishedSpan] {
        state.withLock { state in
            let batch = Array(state.spans.prefix(limit))
            state.spans.removeFirst(batch.count)
            return batch
        }
    }

    /// A batch the collector did not take, back at the front for the next try; what no longer
    /// fits beside the spans ended meanwhile is dropped, oldest first.
    func putBack(_ batch: [FinishedSpan]) {
        state.withLock { state in
            let room = max(0, capacity - state.spans.count)
            let kept = batch.suffix(room)
            state.dropped += batch.count - kept.count
            Self.dropped(batch.count - kept.count)
            state.spans.insert(contentsOf: kept, at: 0)
        }
    }

    /// A batch the collector refused for good (a 4xx other than 429): counted as dropped.
    func drop(_ count: Int) {
        state.withLock { $0.dropped += count }
        Self.dropped(count)
    }

    /// Every queue's drops in this process, for the daemon's metrics (it has one tracer).
    package static let droppedInProcess = Atomic<Int>(0)

    private static func dropped(_ count: Int) {
        if count > 0 { droppedInProcess.add(count, ordering: .relaxed) }
    }
}
