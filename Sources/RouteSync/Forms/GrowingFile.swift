import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file another thread is still writing: a pack on its way (B8). A reader that reaches its end
/// waits for more instead of taking it for the end, until the writer says it is done, so a pack's
/// frames are decoded while the rest of it is still on the link, and the files are ready about
/// when its last byte arrives rather than a decoding pass later.
///
/// What is read early needs no trust in the writer: every frame is hashed against the table as
/// it is decoded (G1), so a body that restarts, fails half-way or is corrupt ends in frames that
/// fail and go to their next form, never in a wrong file.
///
/// A pack fetched in slices (several `Range` requests at once, each on a connection of its own:
/// SlicedDownload) grows in several places; readers then see only the prefix that is whole, which
/// the writers advance as they write (`wrote`).
package final class GrowingFile: Sendable {
    package let path: String
    /// Where each slice starts (ascending, the first 0); empty: one writer appending.
    package let cuts: [Int64]
    /// Per slice, the bytes written from its start, and the whole prefix they make.
    private let written: Mutex<[Int64]>
    private let prefix = Atomic<Int64>(0)
    private let done = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)
    private let cancel: CancelToken?
    /// Waits for the file to appear and at its end, counted: what tests synchronize on.
    private let waitsForCreation = Atomic<Int>(0)
    private let waits = Atomic<Int>(0)

    package init(path: String, cuts: [Int64] = [], cancel: CancelToken? = nil) {
        self.path = path
        self.cuts = cuts
        written = Mutex(Array(repeating: 0, count: cuts.count))
        self.cancel = cancel
    }

    /// A slice's writer has written `count` bytes from the slice's start (a writer that went past
    /// its slice's end, the whole body for a server that ignored the range, covers those after it).
    package func wrote(slice: Int, count: Int64) {
        let whole = written.withLock { written -> Int64 in
            written[slice] = max(written[slice], count)
            var end: Int64 = 0
            for (i, start) in cuts.enumerated() where start <= end {
                end = max(end, start + written[i])
            }
            return end
        }
        prefix.store(whole, ordering: .releasing)
    }

    /// The bytes from the start that are whole (slices only).
    package var wholePrefix: Int64 { prefix.load(ordering: .acquiring) }

    /// How many bytes from `position` a reader may read now (at most `count`): all of them for a
    /// file with one writer, whose end is where the reader stops; up to the whole prefix for slices.
    func readable(from position: Int64, _ count: Int) -> Int {
        guard !cuts.isEmpty else { return count }
        return Int(max(0, min(Int64(count), prefix.load(ordering: .acquiring) - position)))
    }

    /// The writer has finished, failed or given up: the file's end is its end.
    package func finish() { done.store(true, ordering: .releasing) }

    /// The writer broke off, or started again from the file's first byte: what readers took of it
    /// is no prefix of anything, and a reader that serves it on stops (a LAN peer's stream).
    package func fail() {
        failed.store(true, ordering: .releasing)
        finish()
    }

    package var isFailed: Bool { failed.load(ordering: .acquiring) }

    /// Whether the writer was done: read this before reading the file, and an end found after it is the end.
    package var isFinished: Bool { done.load(ordering: .acquiring) || (cancel?.isCancelled ?? false) }

    /// A moment for the writer to write more (a link's bytes arrive every millisecond or so; the
    /// loop reads 128 KiB at a time).
    static func pause() { usleep(2_000) }

    /// The reader is at the end of what was written and the writer is not done: wait a moment.
    func waitForMore() {
        waits.add(1, ordering: .relaxed)
        Self.pause()
    }

    /// How many times a reader waited at the end of what was written.
    package var waitsForMore: Int { waits.load(ordering: .relaxed) }
    /// How many times a reader waited for the writer to create the file.
    package var waitsForFile: Int { waitsForCreation.load(ordering: .relaxed) }

    /// Opens the file for reading, waiting for the writer to create it; -1 when it never did.
    func open() -> Int32 {
        while true {
            let over = isFinished
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 || over || errno != ENOENT { return fd }
            waitsForCreation.add(1, ordering: .relaxed)
            Self.pause()
        }
    }
}
