#if canImport(Glibc)
import Glibc
#endif
import ReportHeader

/// One reader thread's work: whole log lines in, 24-byte `LineEntry`s out, with the counts of lines
/// that are not reports. No allocation per line on the nginx JSON lines cenariusd documents
/// (`NginxLine`, `ReportScanner`); any other line takes `AccessLog.parseLine` and the
/// structured-headers library, as before, and gives the same entry.
struct LineParser: Sendable {
    let since: Double?
    private var names = NameTable()
    private var lists: [ListKey: Int] = [:]
    private var listCount = 0
    private var scratch = [UInt8](repeating: 0, count: 64 << 10)
    private var fields = ReportFields()
    private var failedIDs: [Int] = []

    init(since: Double?) { self.since = since }

    /// A failed list in the reader's numbering, its names in the header's order: up to three
    /// numbers packed in one word (a device sends at most four names, mostly none or one).
    private enum ListKey: Hashable {
        case small(UInt64)
        case large([Int])
    }

    /// Every line of `chunk` (lines end with a newline; the last one may not).
    mutating func read(_ chunk: UnsafeRawBufferPointer, into result: inout ChunkResult) {
        guard let base = chunk.baseAddress else { return }
        begin(&result)
        var start = 0
        while start < chunk.count {
            let end: Int
            if let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), chunk.count - start) {
                end = base.distance(to: UnsafeRawPointer(newline))
            } else {
                end = chunk.count
            }
            line(UnsafeRawBufferPointer(start: base + start, count: end - start), into: &result)
            start = end + 1
        }
    }

    /// Names and lists numbered from here on are reported in `result`.
    func begin(_ result: inout ChunkResult) {
        result.firstName = names.count
        result.firstList = listCount
    }

    mutating func line(_ line: UnsafeRawBufferPointer, into result: inout ChunkResult) {
        result.lines += 1
        if scratch.count < line.count { scratch = [UInt8](repeating: 0, count: line.count) }
        let scanned = scratch.withUnsafeMutableBytes { NginxLine.scan(line, into: $0.baseAddress!) }
        guard let (time, length) = scanned else { return slowLine(line, into: &result) }
        // The report is in `scratch`: copy it out of the way only when the library must read it.
        let copy = scratch
        copy.withUnsafeBytes { report(UnsafeRawBufferPointer(rebasing: $0[..<length]), time: time, into: &result) }
    }

    /// A line that is not nginx's JSON as documented (other key order, escapes, a Swift proxy's line).
    private mutating func slowLine(_ line: UnsafeRawBufferPointer, into result: inout ChunkResult) {
        guard let (time, header) = AccessLog.parseLine(ArraySlice(line)) else { result.malformed += 1; return }
        Array(header.utf8).withUnsafeBytes { report($0, time: time, into: &result) }
    }

    private mutating func report(_ header: UnsafeRawBufferPointer, time: Double, into result: inout ChunkResult) {
        if header.isEmpty || (header.count == 1 && header[0] == UInt8(ascii: "-")) { result.withoutReport += 1; return }
        if let since, time < since { result.beforeSince += 1; return }
        switch ReportScanner.scan(header, into: &fields) {
        case .report:
            entry(header, fields, time: time, into: &result)
        case .notAReport:
            result.malformed += 1
        case .unsure:
            guard let report = FleetReport(headerValue: header) else { result.malformed += 1; return }
            add(report, at: time, into: &result)
        }
    }

    /// A report the library parsed (or a test made), as an entry.
    mutating func add(_ report: FleetReport, at time: Double, into result: inout ChunkResult) {
        var bytes = Array(report.device.utf8)
        var parsed = ReportFields()
        parsed.device = 0..<bytes.count
        bytes += report.release.utf8
        parsed.release = parsed.device.upperBound..<bytes.count
        for name in report.failed {
            let start = bytes.count
            bytes += name.utf8
            parsed.failed.append(start..<bytes.count)
        }
        parsed.state = report.state
        parsed.why = report.why.map(ReportScanner.whyNumber) ?? 0
        bytes.withUnsafeBytes { entry($0, parsed, time: time, into: &result) }
    }

    private mutating func entry(_ header: UnsafeRawBufferPointer, _ fields: ReportFields, time: Double, into result: inout ChunkResult) {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: header[fields.device]))
        let key = UInt64(truncatingIfNeeded: hasher.finalize())
        var room = true
        failedIDs.removeAll(keepingCapacity: true)
        for range in fields.failed {
            guard let id = name(UnsafeRawBufferPointer(rebasing: header[range]), into: &result) else { room = false; break }
            if !failedIDs.contains(id) { failedIDs.append(id) }
        }
        let release = room ? name(UnsafeRawBufferPointer(rebasing: header[fields.release]), into: &result) : nil
        var word = LineEntry.noRoom
        if let release {
            // Like `Set(report.failed).subtracting([report.release])`: a device's own release is not among those it gave up.
            failedIDs.removeAll { $0 == release }
            if let list = list(failedIDs, into: &result) {
                word = LineEntry.word(release: release, list: list, state: ReportScanner.stateNumber(fields.state), why: fields.why)
            }
        }
        result.entries.append(LineEntry(key: key, time: time, word: word))
    }

    private mutating func name(_ bytes: UnsafeRawBufferPointer, into result: inout ChunkResult) -> Int? {
        let before = names.count
        guard let id = names.id(bytes) else { return nil }
        if names.count > before { result.names.append(Array(bytes)) }
        return id
    }

    private mutating func list(_ ids: [Int], into result: inout ChunkResult) -> Int? {
        let key: ListKey
        if ids.count <= 3 {
            var packed = UInt64(ids.count) << 60
            for (n, id) in ids.enumerated() { packed |= UInt64(id) << (20 * n) }
            key = .small(packed)
        } else {
            key = .large(ids)
        }
        if let id = lists[key] { return id }
        guard listCount < NameTable.maxNames else { return nil }
        lists[key] = listCount
        listCount += 1
        result.lists.append(ids)
        return listCount - 1
    }
}
