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
        if objects[state.headKey] != nil, let bytes = try destination.read(state.headKey, limit: ReleaseHead.maxBytes) {
            state.headBytes = bytes
            state.head = try? ReleaseHead.parse(bytes, source: destination.description + state.headKey)
        }
        state.records = try records(in: destination, objects: objects, channel: channel, newest: recordCount)
        if state.isDefaultChannel, objects[routesName] != nil, let bytes = try destination.read(routesName) {
            state.tableBytes = bytes
            state.table = try? RouteTable.parse(bytes, source: destination.description + routesName)
            state.sidecar = objects[routesName + ".sig"] == nil ? nil : try destination.read(routesName + ".sig", limit: 64 << 10)
            state.manifest = objects[routesName + ".release"] == nil ? nil : try destination.read(routesName + ".release", limit: 64 << 10)
        }
        return state
    }

    /// A channel's records (the newest `newest` of them), oldest first; one that does not read is left out.
    package static func records(in destination: some Destination, objects: [String: StoredObject], channel: String, newest: Int? = nil) throws(CenariusError) -> [ReleaseRecord] {
        var versions = objects.keys.compactMap(ReleaseRecord.parseKey).filter { $0.channel == channel }.map(\.version).sorted()
        if let newest { versions = Array(versions.suffix(newest)) }
        var records: [ReleaseRecord] = []
        for version in versions {
            let key = ReleaseRecord.key(channel: channel, version: version)
            guard let bytes = try destination.read(key, limit: 1 << 20), let record = try? ReleaseRecord.parse(bytes, source: key) else { continue }
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
