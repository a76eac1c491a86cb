#if canImport(Glibc)
import Glibc
#endif
import Dispatch
package import RouteSync
import Synchronization

/// Reads access logs into a `FleetTally` on every core: this thread reads each file (read(2), or
/// zlib for gzip) in chunks of whole lines, `threads` others parse the chunks, and each chunk is
/// taken into the tally in the log's order by whichever thread finished the one before, so the
/// counts are those of reading every line in turn, whatever the number of threads.
package struct FleetReading: Sendable {
    /// Threads that parse; 1 parses on the calling thread.
    package var threads: Int
    package var chunkBytes = 1 << 20
    /// A line longer than this counts as malformed and is skipped.
    package var maxLine = 64 << 10
    /// Called from the reading thread after each chunk, for a progress line.
    package var progress: (@Sendable (Progress) -> Void)?

    package struct Progress: Sendable {
        package var path: String
        /// Bytes read of all the files (compressed bytes for gzip) and their size in all.
        package var done: Int
        package var total: Int
    }

    package init(threads: Int) {
        self.threads = max(1, threads)
    }

    /// The default threads: one per core online, at most 8 (each holds a 1 MiB buffer).
    package static var cores: Int { min(8, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))) }

    /// A folder stands for the reports devices left in it (docs/bundles.md): its `cenarius-reports/`
    /// when it has one (a stick's root), else its own `*.json`; regular files only, links not
    /// followed (anyone may plant one on a stick). Any other path is itself.
    package static func reports(in path: String) -> [String] {
        guard FileSystem.isDirectory(path) else { return [path] }
        let inner = FileSystem.join(path, "cenarius-reports")
        let folder = FileSystem.kind(inner) == S_IFDIR ? inner : path
        return FileSystem.listDirectory(folder).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
            .map { FileSystem.join(folder, $0) }.filter { FileSystem.kind($0) == S_IFREG }
    }

    private static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    package func tally(_ paths: [String], since: Double?, maxDevices: Int, timeline: Bool = false) throws(CenariusError) -> FleetTally {
        let paths = paths.flatMap(Self.reports(in:))
        let tally = FleetTally(since: since, maxDevices: maxDevices, timeline: timeline)
        // Gzip too: zlib inflates a log in about a third of the time parsing it takes (and of
        // zcat's), so the reading thread leaves the cores to the parsers there as well.
        return threads == 1 ? try alone(paths, tally) : try together(paths, tally, parsers: threads)
    }

    /// Everything on this thread: the reference the threaded reading must agree with.
    private func alone(_ paths: [String], _ start: FleetTally) throws(CenariusError) -> FleetTally {
        var tally = start
        var parser = LineParser(since: tally.since, hash: tally.deviceHash)
        var index = 0
        try eachChunk(paths, take: { ChunkBuffer(capacity: LineChunker(chunkBytes: chunkBytes, maxLine: maxLine).capacity) }) { buffer in
            var result = ChunkResult(index: index, source: 0)
            index += 1
            parse(buffer, with: &parser, into: &result)
            tally.apply(result)
            return buffer
        }
        return tally
    }

    private func together(_ paths: [String], _ start: FleetTally, parsers threads: Int) throws(CenariusError) -> FleetTally {
        let capacity = LineChunker(chunkBytes: chunkBytes, maxLine: maxLine).capacity
        // Two buffers more than parsers: one being filled, one ready; a chunk holds its buffer until
        // the tally has it, which bounds the chunks waiting for an earlier one.
        let free = Handoff<ChunkBuffer>()
        for _ in 0..<(threads + 2) { free.put(ChunkBuffer(capacity: capacity)) }
        let ready = Handoff<ChunkBuffer?>()
        let taking = Mutex(InOrder(tally: start))
        let group = DispatchGroup()
        for source in 0..<threads {
            // A queue of its own is a thread of its own: parsing blocks, and the concurrency pool is not for that.
            DispatchQueue(label: "cenariusd.fleet-\(source)").async(group: group) {
                var parser = LineParser(since: start.since, hash: start.deviceHash)
                while let buffer = ready.take() {
                    var result = ChunkResult(index: buffer.index, source: source)
                    parse(buffer, with: &parser, into: &result)
                    let done = taking.withLock { $0.take(result, buffer) }
                    for buffer in done { free.put(buffer) }
                }
            }
        }
        var index = 0
        var failure: CenariusError?
        do {
            try eachChunk(paths, take: free.take) { buffer in
                buffer.index = index
                index += 1
                ready.put(buffer)
                return nil
            }
        } catch {
            failure = error
        }
        for _ in 0..<threads { ready.put(nil) }
        group.wait()
        if let failure { throw failure }
        return taking.withLock { $0.tally }
    }

    private func parse(_ buffer: ChunkBuffer, with parser: inout LineParser, into result: inout ChunkResult) {
        parser.begin(&result)
        result.lines += buffer.overlong
        result.malformed += buffer.overlong
        parser.read(buffer.lines, format: buffer.format, into: &result)
    }

    /// Fills buffers from `take` with chunks of every file in turn and hands each to `chunk`, which
    /// returns a buffer to fill next (or nil: take another).
    private func eachChunk(_ paths: [String], take: () -> ChunkBuffer, _ chunk: (ChunkBuffer) throws(CenariusError) -> ChunkBuffer?) throws(CenariusError) {
        var total = 0
        var doneBefore = 0
        var buffer: ChunkBuffer? = nil
        let clock = ContinuousClock()
        let started = clock.now
        var shown = started
        for path in paths {
            var file = try LogFile(path)
            if total == 0 { total = paths.reduce(0) { $0 + Self.size($1) } }
            var chunker = LineChunker(chunkBytes: chunkBytes, maxLine: maxLine)
            var more = true
            // Each file is told by its first lines: one run may read several CDNs' logs. A file is
            // read from its start once more for that; a pipe (`<(zcat …)`) cannot be, and is told
            // by its first chunk.
            var format = file.isRegular ? try LogFile.format(of: path) : nil
            while more {
                let next = buffer ?? take()
                buffer = nil
                more = try chunker.fill(next, from: &file)
                if format == nil { format = LogFormat.detect(next.lines) }
                next.format = format ?? .lines
                if next.count > 0 || next.overlong > 0 {
                    buffer = try chunk(next)
                } else {
                    buffer = next
                }
                if let progress {
                    let now = clock.now
                    if now - started > .seconds(1) && now - shown > .milliseconds(250) {
                        shown = now
                        progress(Progress(path: path, done: doneBefore + file.position, total: total))
                    }
                }
            }
            doneBefore += file.size
        }
    }
}

/// The tally and the chunks parsed ahead of the one it waits for.
private struct InOrder: ~Copyable {
    var tally: FleetTally
    var next = 0
    var waiting: [Int: (ChunkResult, ChunkBuffer)] = [:]

    /// Takes every chunk it can in order; returns their buffers.
    mutating func take(_ result: ChunkResult, _ buffer: ChunkBuffer) -> [ChunkBuffer] {
        waiting[result.index] = (result, buffer)
        var done: [ChunkBuffer] = []
        while let (result, buffer) = waiting.removeValue(forKey: next) {
            tally.apply(result)
            done.append(buffer)
            next += 1
        }
        return done
    }
}
