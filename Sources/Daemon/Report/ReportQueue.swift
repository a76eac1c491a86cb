/// The reports not yet acknowledged, oldest first, as the JSON lines they are posted as: pure,
/// so that the bound, the batches and the file format are tested without a disk or a network.
///
/// Bounded by events and bytes; past either bound the oldest go first and `dropped` counts them
/// (kept in the file, so the count survives restarts). Each entry has a sequence number of this
/// process, so that acknowledging a batch removes exactly its events even when newer ones arrived,
/// or older ones were dropped, while it was in flight.
struct ReportQueue: Sendable, Equatable {
    static let defaultMaxEvents = 1000
    static let defaultMaxBytes = 1 << 20

    struct Entry: Sendable, Equatable {
        let sequence: Int
        let line: String
    }

    struct Batch: Sendable, Equatable {
        let lines: [String]
        /// The sequence number of its last event: `acknowledge(through:)` takes it.
        let last: Int
        var body: [UInt8] { CloudEvent.batch(lines) }
    }

    let maxEvents: Int
    let maxBytes: Int
    private(set) var entries: [Entry] = []
    private(set) var bytes = 0
    private(set) var dropped = 0
    private var nextSequence = 0

    init(maxEvents: Int = defaultMaxEvents, maxBytes: Int = defaultMaxBytes) {
        self.maxEvents = max(1, maxEvents)
        self.maxBytes = max(1, maxBytes)
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Queues one event's line; the number of older events dropped to make room.
    @discardableResult
    mutating func append(_ line: String) -> Int {
        entries.append(Entry(sequence: nextSequence, line: line))
        nextSequence += 1
        bytes += line.utf8.count + 1
        var removed = 0
        // An event larger than the whole bound still goes (alone): reports are never silently empty.
        while entries.count > 1 && (entries.count > maxEvents || bytes > maxBytes) {
            bytes -= entries.removeFirst().line.utf8.count + 1
            removed += 1
        }
        dropped += removed
        return removed
    }

    /// The oldest events, at most `maxEvents` of them and about `maxBytes` (never fewer than one).
    func batch(maxEvents: Int = 100, maxBytes: Int = 256 << 10) -> Batch? {
        guard !entries.isEmpty else { return nil }
        var lines: [String] = []
        var size = 0
        var last = entries[0].sequence
        for entry in entries {
            let grown = size + entry.line.utf8.count + 1
            if !lines.isEmpty && (lines.count >= maxEvents || grown > maxBytes) { break }
            lines.append(entry.line)
            size = grown
            last = entry.sequence
        }
        return Batch(lines: lines, last: last)
    }

    /// A 2xx for a batch: its events (those still queued) leave the queue.
    mutating func acknowledge(through last: Int) {
        while let first = entries.first, first.sequence <= last {
            bytes -= entries.removeFirst().line.utf8.count + 1
        }
    }

    // MARK: - The file

    /// A header line with the dropped count, then one CloudEvent per line.
    func serialized() -> [UInt8] {
        var text = "{\"dropped\":\(dropped)}\n"
        for entry in entries { text += entry.line + "\n" }
        return Array(text.utf8)
    }

    /// What `serialized` wrote. Lines that are not JSON objects (a file cut short by hand or by a
    /// disk that lied) are skipped and counted as dropped; the bounds apply to what is read.
    static func parse(_ bytes: [UInt8], maxEvents: Int = defaultMaxEvents, maxBytes: Int = defaultMaxBytes) -> ReportQueue {
        var queue = ReportQueue(maxEvents: maxEvents, maxBytes: maxBytes)
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)[...]
        var dropped = 0
        if let first = lines.first, first.starts(with: Array("{\"dropped\":".utf8)) {
            lines = lines.dropFirst()
            dropped = Int(String(decoding: first.dropFirst(11).dropLast(), as: UTF8.self)) ?? 0
        }
        for line in lines {
            guard line.first == UInt8(ascii: "{"), line.last == UInt8(ascii: "}"), let text = String(validating: line, as: UTF8.self) else {
                dropped += 1
                continue
            }
            queue.append(text)
        }
        queue.dropped += dropped
        return queue
    }
}
