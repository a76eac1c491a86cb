package import RouteSync

/// What a remote holds before a publish: every name in it (one listing), the channel's head and
/// release records, and the Cenarius layout's table and signature. Everything `publish` decides
/// — what to skip, what to patch against, which version comes next — is read from the remote
/// itself, so a publisher needs no old build folders and two machines can take turns.
package struct RemoteState: Sendable {
    package var objects: [String: StoredObject]
    package var channel: String
    package var routesName: String
    /// The channel's head, its exact bytes, if the remote has one that reads.
    package var head: ReleaseHead?
    package var headBytes: [UInt8]?
    /// The channel's records, oldest first.
    package var records: [ReleaseRecord]
    /// `Routes.json` and its sidecar, for the default channel.
    package var table: RouteTable?
    package var tableBytes: [UInt8]?
    package var sidecar: [UInt8]?
    /// `Routes.json.release`, for the default channel.
    package var manifest: [UInt8]?
    /// The uris whose file at the default channel's layout holds the bytes the build being
    /// published lists (`LayoutCheck`); nil until checked, and then nothing is taken as there.
    package var layoutMatching: Set<String>?

    package var headKey: String { ReleaseHead.name(routesName: routesName, channel: channel) }
    package var isDefaultChannel: Bool { channel == ReleaseHead.defaultChannel }

    /// `records`: how many of the channel's newest records to read (nil: all), since each is a request.
    /// `listing`: the remote's listing when the caller has it already (one per command, not per channel).
    package static func read(_ destination: some Destination, channel: String, routesName: String, records recordCount: Int? = nil,
                             listing: [String: StoredObject]? = nil) throws(CenariusError) -> RemoteState {
        let objects: [String: StoredObject]
        if let listing { objects = listing } else { objects = try destination.list(prefix: "") }
        var state = RemoteState(objects: objects, channel: channel, routesName: routesName, records: [])
        // What the listing names, read in one round of concurrent requests rather than one after
        // another (a one-file release's time is mostly such rounds: B9 v2).
        let recordKeys = recordKeys(in: objects, channel: channel, newest: recordCount)
        let layout = state.isDefaultChannel ? [routesName, routesName + ".sig", routesName + ".release"] : []
        let found = try destination.read(([state.headKey] + layout).filter { objects[$0] != nil } + recordKeys, limit: 64 << 20)
        func bytes(_ key: String, limit: Int) throws(CenariusError) -> [UInt8]? {
            guard let bytes = found[key] else { return nil }
            guard bytes.count <= limit else { throw .remote("\(destination.description)\(key): larger than \(limit) bytes") }
            return bytes
        }
        if let head = try bytes(state.headKey, limit: ReleaseHead.maxBytes) {
            state.headBytes = head
            state.head = try? ReleaseHead.parse(head, source: destination.description + state.headKey)
        }
        state.records = try parseRecords(recordKeys) { key throws(CenariusError) in try bytes(key, limit: 1 << 20) }
        if state.isDefaultChannel, let table = try bytes(routesName, limit: 64 << 20) {
            state.tableBytes = table
            state.table = try? RouteTable.parse(table, source: destination.description + routesName)
            state.sidecar = try bytes(routesName + ".sig", limit: 64 << 10)
            state.manifest = try bytes(routesName + ".release", limit: 64 << 10)
        }
        return state
    }

    /// A channel's records (the newest `newest` of them), oldest first; one that does not read is left out.
    package static func records(in destination: some Destination, objects: [String: StoredObject], channel: String, newest: Int? = nil) throws(CenariusError) -> [ReleaseRecord] {
        let keys = recordKeys(in: objects, channel: channel, newest: newest)
        let found = try destination.read(keys, limit: 1 << 20)
        return parseRecords(keys) { found[$0] }
    }

    /// The keys of a channel's records the listing holds (the newest `newest`), oldest first.
    private static func recordKeys(in objects: [String: StoredObject], channel: String, newest: Int?) -> [String] {
        var versions = objects.keys.compactMap(ReleaseRecord.parseKey).filter { $0.channel == channel }.map(\.version).sorted()
        if let newest { versions = Array(versions.suffix(newest)) }
        return versions.map { ReleaseRecord.key(channel: channel, version: $0) }
    }

    private static func parseRecords<E: Error>(_ keys: [String], bytes: (String) throws(E) -> [UInt8]?) throws(E) -> [ReleaseRecord] {
        var records: [ReleaseRecord] = []
        for key in keys {
            guard let bytes = try bytes(key), let record = try? ReleaseRecord.parse(bytes, source: key) else { continue }
            records.append(record)
        }
        return records
    }

    /// Whether the default channel's Cenarius layout agrees with its head: `Routes.json` is the
    /// head's table, its sidecars the head's manifest and version, and every file at its uri the
    /// table's (`layoutMatching`, checked against the build of that table). Other channels have none.
    package var layoutAgreesWithHead: Bool {
        guard isDefaultChannel else { return true }
        guard let head, let tableBytes, ReleaseIndex.tableDigest(tableBytes) == head.table, manifest == head.release,
              let table, let layoutMatching, table.entries.allSatisfy({ layoutMatching.contains($0.uri.value) }) else { return false }
        guard head.signature != nil else { return sidecar == nil }
        return sidecar.flatMap { try? TableSignature.parse($0, source: routesName + ".sig") }?.version == head.version
    }

    /// Every channel that has a head or a record.
    package var channels: Set<String> {
        var names = Set(objects.keys.compactMap(ReleaseRecord.parseKey).map(\.channel))
        let stem = routesName.hasSuffix(".json") ? String(routesName.dropLast(5)) : routesName
        for key in objects.keys where key.hasPrefix(stem + ".") && key.hasSuffix(".head") && !key.contains("/") {
            let middle = key.dropFirst(stem.count + 1).dropLast(5)
            names.insert(middle.isEmpty ? ReleaseHead.defaultChannel : String(middle))
        }
        if objects[stem + ".head"] != nil { names.insert(ReleaseHead.defaultChannel) }
        return names.filter(ReleaseHead.isChannel)
    }
}
