package import ReportHeader

/// Each device's latest report, and from them what a publisher asks of a release: how many devices
/// run it and in which state, and how many rolled it back or refused it. Memory grows with the
/// devices (24 bytes each and their index), never with the lines, and stops at `maxDevices`.
///
/// Lines come in `ChunkResult`s, taken in the log's order: whichever thread read a chunk, the
/// outcome is the one of reading every line in turn (the latest report of each device, ties to the
/// later line; the first `maxDevices` devices to appear are the ones kept; names numbered in the
/// order they are first counted).
package struct FleetTally: Sendable {
    package struct Release: Sendable, Equatable {
        package var name: String
        /// Devices whose release in force it is, by state.
        package var confirmed = 0, trial = 0, deferred = 0, held = 0
        /// Devices that rolled it back or refused it (it is in their `failed` list).
        package var failed = 0
        /// The files' bytes this release took from LAN peers and from the origin, summed over the
        /// devices running it whose latest report says (docs/peers.md); 0 when none does.
        package var peerBytes: Int64 = 0, originBytes: Int64 = 0

        package init(name: String) { self.name = name }

        package var seen: Int { confirmed + trial + deferred + held }
        /// Devices that tried it: those that run it and those that gave it up.
        package var tried: Int { seen + failed }
    }

    package private(set) var lines = 0
    package private(set) var malformed = 0
    package private(set) var withoutReport = 0
    package private(set) var beforeSince = 0
    /// Report lines of devices beyond `maxDevices`, not counted (anyone who reaches the origin can
    /// send reports, so a flood of forged device ids must not take the memory: docs/threats.md).
    package private(set) var droppedLines = 0
    package let maxDevices: Int
    /// Lines older than this (unix seconds) are counted in `beforeSince`, their reports not read.
    package var since: Double? { parser.since }
    /// What makes the devices' keys: every reader of this tally must use it.
    var deviceHash: DeviceHash { parser.hash }
    /// Of `droppedLines`, those dropped for a release name past `maxNames` (or past 16 MiB of names).
    package private(set) var droppedForNames = 0
    /// Distinct release names (and `failed` lists) kept: a fleet runs a few hundred releases,
    /// and one forged id could otherwise send millions of names.
    package static let maxNames = 65_536
    static let maxNameBytes = 16 << 20
    /// A 10⁷-device fleet fits (about 300 MB); past it, lines of new devices are counted as dropped.
    package static let defaultMaxDevices = 10_000_000

    private var table = DeviceTable()
    /// With a timeline: every change of a device's release, state or failed list, as it is taken in.
    private(set) var moves: [Move]?
    private var names = Interned<String>()
    private var nameBytes = 0
    private var failedLists = Interned<[Int32]>()
    /// When each release was first reported as a device's, by name number: the newest is the last to appear.
    private var firstSeen: [Double] = []
    /// Each reader's names and lists, and the numbers the tally gave them.
    private var sources: [Int: SourceNames] = [:]
    /// The reader of `add(line:)`, for callers that read lines themselves.
    private var parser: LineParser
    private static let ownSource = -1

    private struct SourceNames: Sendable {
        var names: [[UInt8]] = []
        var nameIDs: [Int32] = []
        var lists: [[Int]] = []
        var listIDs: [Int32] = []
    }

    /// - Parameter maxDevices: devices counted at most; reports of any more are dropped and counted.
    /// - Parameter timeline: keep each device's moves from release to release (`timeline()`, `fleet --html`).
    package init(since: Double? = nil, maxDevices: Int = FleetTally.defaultMaxDevices, timeline: Bool = false) {
        self.maxDevices = max(1, maxDevices)
        parser = LineParser(since: since, hash: DeviceHash())
        moves = timeline ? [] : nil
    }

    package var devices: Int { table.count }

    /// One log line.
    package mutating func add(line: ArraySlice<UInt8>) {
        var result = ChunkResult(source: Self.ownSource)
        parser.begin(&result)
        line.withUnsafeBytes { parser.line($0, into: &result) }
        apply(result)
    }

    package mutating func add(_ report: FleetReport, at time: Double) {
        var result = ChunkResult(source: Self.ownSource)
        parser.begin(&result)
        parser.add(report, at: time, into: &result)
        apply(result)
    }

    /// A chunk's lines; chunks must come in the log's order.
    mutating func apply(_ result: ChunkResult) {
        lines += result.lines
        malformed += result.malformed
        withoutReport += result.withoutReport
        beforeSince += result.beforeSince
        var source = sources.removeValue(forKey: result.source) ?? SourceNames()
        precondition(source.names.count == result.firstName && source.lists.count == result.firstList, "chunks out of order")
        source.names += result.names
        source.nameIDs += repeatElement(-1, count: result.names.count)
        source.lists += result.lists
        source.listIDs += repeatElement(-1, count: result.lists.count)
        var next = 0
        for entry in result.entries {
            var bytes: PeerBytes?
            if entry.word & LineEntry.carriesBytes != 0 {
                bytes = result.bytes[next]
                next += 1
            }
            apply(entry, bytes, &source)
        }
        sources[result.source] = source
    }

    @inline(__always)
    private mutating func apply(_ entry: LineEntry, _ bytes: PeerBytes?, _ source: inout SourceNames) {
        let (found, slot) = table.find(entry.key)
        if let found {
            if table.records[found].time > entry.time { return }
        } else if table.count >= maxDevices {
            droppedLines += 1
            return
        }
        guard entry.hasRoom else { return dropForNames() }
        // Names are bounded like devices: one forged id can send a million release names too.
        // Numbered as they are first counted: the failed names, the release, then the list.
        var list = source.listIDs[entry.list]
        var failed: [Int32] = []
        if list < 0 {
            for name in source.lists[entry.list] {
                guard let id = resolve(name, &source) else { return dropForNames() }
                failed.append(id)
            }
        }
        guard let release = resolve(entry.release, &source) else { return dropForNames() }
        if list < 0 {
            guard let id = failedLists.id(failed.sorted(), limit: Self.maxNames) else { return dropForNames() }
            list = id
            source.listIDs[entry.list] = id
        }
        let word = UInt64(release) | UInt64(list) << 20 | entry.word & ~0xFF_FFFF_FFFF
        if moves != nil {
            let from = found.map { table.records[$0].word } ?? Move.new
            if from == Move.new || (from ^ word) & Move.counted != 0 { moves?.append(Move(time: entry.time, from: from, to: word)) }
        }
        if let found {
            table.update(found, time: entry.time, word: word)
        } else {
            table.insert(entry.key, at: slot, time: entry.time, word: word)
        }
        if let bytes { table.setBytes(found ?? table.count - 1, bytes) }
        if entry.time < firstSeen[Int(release)] { firstSeen[Int(release)] = entry.time }
    }

    /// The tally's number for a reader's name, numbering it if it is new here.
    private mutating func resolve(_ name: Int, _ source: inout SourceNames) -> Int32? {
        let known = source.nameIDs[name]
        if known >= 0 { return known }
        let text = String(decoding: source.names[name], as: UTF8.self)
        let room = nameBytes + text.utf8.count <= Self.maxNameBytes
        guard let id = names.id(text, limit: room ? Self.maxNames : 0, ifNew: { nameBytes += text.utf8.count }) else { return nil }
        if Int(id) == firstSeen.count { firstSeen.append(.infinity) }
        source.nameIDs[name] = id
        return id
    }

    /// The tally's number of a release name (-1 when it has none), and the names of a failed list.
    func nameID(_ name: String) -> Int { names.id(of: name).map(Int.init) ?? -1 }
    func failedList(_ list: Int) -> [Int32] { failedLists[Int32(list)] }

    private mutating func dropForNames() {
        droppedLines += 1
        droppedForNames += 1
    }

    private func each(_ body: (_ release: Int, _ list: Int, _ state: Int, _ why: Int) -> Void) {
        for record in table.records {
            body(Int(record.word & 0xF_FFFF), Int((record.word >> 20) & 0xF_FFFF), Int((record.word >> 40) & 3), Int((record.word >> 42) & 31))
        }
    }

    /// Per release, most devices first.
    package func releases() -> [Release] {
        var byName: [Int32: Release] = [:]
        for (record, bytes) in table.bytes {
            let id = Int32(table.records[Int(record)].word & 0xF_FFFF)
            // Saturating: a forged report may say 10¹⁵ bytes, and there may be millions of them.
            var release = byName[id] ?? Release(name: names[id])
            release.peerBytes = Self.sum(release.peerBytes, bytes.peer)
            release.originBytes = Self.sum(release.originBytes, bytes.origin)
            byName[id] = release
        }
        each { releaseID, list, state, _ in
            let id = Int32(releaseID)
            var release = byName[id] ?? Release(name: names[id])
            switch ReportScanner.states[state] {
            case .confirmed: release.confirmed += 1
            case .trial: release.trial += 1
            case .deferred: release.deferred += 1
            case .held: release.held += 1
            }
            byName[id] = release
            for name in failedLists[Int32(list)] {
                byName[name, default: Release(name: names[name])].failed += 1
            }
        }
        return byName.values.sorted { ($0.tried, $0.name) > ($1.tried, $1.name) }
    }

    static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : total
    }

    /// Peer and origin bytes over every device whose latest report says (the fleet's uplink saving).
    package func totalBytes() -> PeerBytes {
        table.bytes.values.reduce(PeerBytes(peer: 0, origin: 0)) { PeerBytes(peer: Self.sum($0.peer, $1.peer), origin: Self.sum($0.origin, $1.origin)) }
    }

    /// Devices whose latest report carries peer and origin bytes.
    package var devicesWithBytes: Int { table.bytes.count }

    /// The devices not on the newest release (the last to appear as a device's), per `why` code:
    /// "3 devices not on 2026.11-b: 3 held-back". nil when the log names no release.
    package func notOnNewest() -> (release: String, devices: Int, why: [String: Int])? {
        guard let newest = firstSeen.indices.filter({ firstSeen[$0].isFinite }).max(by: { (firstSeen[$0], $0) < (firstSeen[$1], $1) }) else { return nil }
        var devices = 0
        var counts: [String: Int] = [:]
        each { release, _, _, why in
            guard release != newest else { return }
            devices += 1
            if let why = ReportScanner.why(number: why) { counts[why.rawValue, default: 0] += 1 }
        }
        return (names[Int32(newest)], devices, counts)
    }

    /// Devices per `why` code (docs/why.md), by each device's latest report; devices whose
    /// reports carry none (older versions) are not counted here.
    package func whyCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        each { _, _, _, why in if let why = ReportScanner.why(number: why) { counts[why.rawValue, default: 0] += 1 } }
        return counts
    }
}

/// Values numbered in the order first seen, each stored once.
struct Interned<Value: Hashable & Sendable>: Sendable {
    private var ids: [Value: Int32] = [:]
    private var values: [Value] = []

    /// nil when `value` is new and `limit` values are held already.
    mutating func id(_ value: Value, limit: Int, ifNew: () -> Void = {}) -> Int32? {
        if let id = ids[value] { return id }
        guard values.count < limit else { return nil }
        let id = Int32(values.count)
        values.append(value)
        ids[value] = id
        ifNew()
        return id
    }

    subscript(id: Int32) -> Value { values[Int(id)] }

    func id(of value: Value) -> Int32? { ids[value] }
}
