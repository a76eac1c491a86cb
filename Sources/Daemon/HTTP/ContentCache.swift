import NIOCore
import Synchronization

/// Small immutable bodies kept in memory, keyed by content hash: a hash names exactly one
/// content forever, so an entry can never be stale. Bounded by a byte budget, evicted FIFO.
final class ContentCache: Sendable {
    private struct State {
        var entries: [String: ByteBuffer] = [:]
        var order: [String] = []
        var bytes = 0
    }

    private let state = Mutex(State())
    let budget: Int
    /// Bodies larger than this are streamed from disk instead.
    let maxEntry: Int

    init(budget: Int, maxEntry: Int = 1 << 20) {
        self.budget = budget
        self.maxEntry = maxEntry
    }

    func get(_ key: String) -> ByteBuffer? { state.withLock { $0.entries[key] } }

    func put(_ key: String, _ buffer: ByteBuffer) {
        guard buffer.readableBytes <= maxEntry, budget > 0 else { return }
        state.withLock { state in
            guard state.entries[key] == nil else { return }
            while state.bytes + buffer.readableBytes > budget, !state.order.isEmpty {
                let evicted = state.order.removeFirst()
                state.bytes -= state.entries.removeValue(forKey: evicted)?.readableBytes ?? 0
            }
            state.entries[key] = buffer
            state.order.append(key)
            state.bytes += buffer.readableBytes
        }
    }
}
