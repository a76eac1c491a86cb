#if canImport(Glibc)
import Glibc
#endif
import ReportHeader

/// One reader thread's work: whole log lines in, 24-byte `LineEntry`s out, with the counts of lines
/// that are not reports. No allocation per line on the nginx JSON lines cenariusd documents
/// (`NginxLine`, `ReportScanner`); any other line takes `AccessLog.parseLine` and the
/// structured-headers library, as before, and gives the same entry.
struct LineParser: Sendable {
    /// Where a line's report is unescaped to; apart from `core`, so that one can be read while the
    /// other changes (no copy, no reference counting per line).
    private var scratch = [UInt8](repeating: 0, count: 64 << 10)
    private var core: Core

    /// - Parameter hash: the same for every parser of one tally: it makes the devices' keys.
    init(since: Double?, hash: DeviceHash) { core = Core(since: since, hash: hash) }

    var hash: DeviceHash { core.hash }

    var since: Double? { core.since }

    /// Every line of `chunk` (lines end with a newline; the last one may not), of a log of `format`.
    mutating func read(_ chunk: UnsafeRawBufferPointer, format: LogFormat = .lines, into result: inout ChunkResult) {
        guard let base = chunk.baseAddress else { return }
        var start = 0
        while start < chunk.count {
            let end: Int
            if let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), chunk.count - start) {
                end = base.distance(to: UnsafeRawPointer(newline))
            } else {
                end = chunk.count
            }
            let text = UnsafeRawBufferPointer(start: base + start, count: end - start)
            switch format {
            case .lines: line(text, into: &result)
            case .s3: queryLine(QueryReport.s3(text), into: &result)
            case .cloudFrontRealtime: queryLine(RealtimeLine.read(text), into: &result)
            case .cloudFront(let date, let time, let query):
                // `#Version:`, `#Fields:`: the file's header, not a request.
                if text.first == UInt8(ascii: "#") { break }
                queryLine(QueryReport.cloudFront(text, date: date, time: time, query: query), into: &result)
            }
            start = end + 1
        }
    }

    /// A line its format's own reader read (S3, CloudFront): its time and report, empty when it has none.
    private mutating func queryLine(_ read: (time: Double, report: [UInt8])?, into result: inout ChunkResult) {
        result.lines += 1
        guard let read else { result.malformed += 1; return }
        read.report.withUnsafeBytes { core.report($0, time: read.time, into: &result) }
    }

    /// Names and lists numbered from here on are reported in `result`.
    func begin(_ result: inout ChunkResult) {
        result.firstName = core.names.count
        result.firstList = core.listCount
    }

    mutating func line(_ line: UnsafeRawBufferPointer, into result: inout ChunkResult) {
        result.lines += 1
        if scratch.count < line.count { scratch = [UInt8](repeating: 0, count: line.count) }
        scratch.withUnsafeMutableBytes { scratch in
            guard let (time, length) = NginxLine.scan(line, into: scratch.baseAddress!) else { return core.slowLine(line, into: &result) }
            core.report(UnsafeRawBufferPointer(rebasing: scratch[..<length]), time: time, into: &result)
        }
    }

    mutating func add(_ report: FleetReport, at time: Double, into result: inout ChunkResult) {
        core.add(report, at: time, into: &result)
    }
}

/// The parser's state but its scratch space.
private struct Core: Sendable {
    let since: Double?
    let hash: DeviceHash
    var names = NameTable()
    private var lists: [ListKey: Int] = [:]
    private(set) var listCount = 0
    private var fields = ReportFields()
    private var failedIDs: [Int] = []

    init(since: Double?, hash: DeviceHash) {
        self.since = since
        self.hash = hash
    }


    /// A line that is not nginx's JSON as documented (other key order, escapes, a Swift proxy's line).
    mutating func slowLine(_ line: UnsafeRawBufferPointer, into result: inout ChunkResult) {
        guard let (time, header) = AccessLog.parseLine(ArraySlice(line)) else { result.malformed += 1; return }
        Array(header.utf8).withUnsafeBytes { report($0, time: time, into: &result) }
    }

    mutating func report(_ header: UnsafeRawBufferPointer, time: Double, into result: inout ChunkResult) {
        if header.isEmpty || (header.count == 1 && header[0] == UInt8(ascii: "-")) { result.withoutReport += 1; return }
        if let since, time < since { result.beforeSince += 1; return }
        switch ReportScanner.scan(header, into: &fields) {
        case .report:
            entry(header, time: time, into: &result)
        case .notAReport:
            result.malformed += 1
        case .unsure:
            guard let report = FleetReport(headerValue: header) else { result.malformed += 1; return }
            add(report, at: time, into: &result)
        }
    }

    /// A report the library parsed (or a test made), as an entry.
    mutating func add(_ report: FleetReport, at time: Double, into result: inout ChunkResult) {
        var room = true
        if !failedIDs.isEmpty { failedIDs.removeAll(keepingCapacity: true) }
        for failed in report.failed {
            guard let id = Array(failed.utf8).withUnsafeBytes({ name($0, into: &result) }) else { room = false; break }
            if !failedIDs.contains(id) { failedIDs.append(id) }
        }
        let release = room ? Array(report.release.utf8).withUnsafeBytes { name($0, into: &result) } : nil
        let key = Array(report.device.utf8).withUnsafeBytes { hash($0) }
        let bytes = report.peerBytes.flatMap { peer in report.originBytes.map { PeerBytes(peer: peer, origin: $0) } }
        finish(key: key, release: release, state: report.state, why: report.why.map(ReportScanner.whyNumber) ?? 0, bytes: bytes, time: time, into: &result)
    }

    /// `fields`, read from `header`, as an entry.
    private mutating func entry(_ header: UnsafeRawBufferPointer, time: Double, into result: inout ChunkResult) {
        var room = true
        if !failedIDs.isEmpty { failedIDs.removeAll(keepingCapacity: true) }
        for index in 0..<fields.failed.count {
            guard let id = name(UnsafeRawBufferPointer(rebasing: header[fields.failed[index]]), into: &result) else { room = false; break }
            if !failedIDs.contains(id) { failedIDs.append(id) }
        }
        let release = room ? name(UnsafeRawBufferPointer(rebasing: header[fields.release]), into: &result) : nil
        finish(key: hash(UnsafeRawBufferPointer(rebasing: header[fields.device])), release: release, state: fields.state, why: fields.why,
               bytes: fields.peer < 0 ? nil : PeerBytes(peer: fields.peer, origin: fields.origin), time: time, into: &result)
    }

    /// The entry of a line whose failed names are in `failedIDs`; nil `release`: no room for a name.
    @inline(__always)
    private mutating func finish(key: UInt64, release: Int?, state: FleetReport.State, why: Int, bytes: PeerBytes?, time: Double,
                                 into result: inout ChunkResult) {
        var word = LineEntry.noRoom
        if let release {
            // Like `Set(report.failed).subtracting([report.release])`: a device's own release is not among those it gave up.
            if failedIDs.contains(release) { failedIDs.removeAll { $0 == release } }
            if let list = list(failedIDs, into: &result) {
                word = LineEntry.word(release: release, list: list, state: ReportScanner.stateNumber(state), why: why)
                if let bytes {
                    word |= LineEntry.carriesBytes
                    result.bytes.append(bytes)
                }
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

/// A failed list in the reader's numbering, its names in the header's order: up to three numbers
/// packed in one word (a device sends at most four names, mostly none or one).
private enum ListKey: Hashable {
    case small(UInt64)
    case large([Int])
}
