package import RouteSync

/// Which release a bundle carries and which releases its devices are on, named as a publisher
/// names them: a version (`releases` lists them), a release name, or a table's SHA-256 (or the
/// first 8 or more of its hex digits). Read from the remote alone, as every publishing command does.
package enum BundleSelection {
    /// The channel's release `selector` names (its head's exact bytes), or the one its head serves.
    package static func release(_ state: RemoteState, _ selector: String?) throws(CenariusError) -> (head: ReleaseHead, bytes: [UInt8]) {
        guard let selector else {
            guard let head = state.head, let bytes = state.headBytes else {
                throw .notFound("channel \(state.channel) has no head to bundle (publish a release to it first)")
            }
            return (head, bytes)
        }
        guard let record = state.records.last(where: { matches($0, selector) }) else {
            throw .notFound("channel \(state.channel) has no release \(selector) (cenariusd releases lists them)")
        }
        return (record.head, record.headBytes)
    }

    /// The table a device on `selector` holds, with its file hashes: a version or release name of
    /// any channel's records, or a table the store holds.
    package static func base(_ selector: String, records: [ReleaseRecord], in destination: some Destination,
                             objects: [String: StoredObject]) throws(CenariusError) -> BundlePlan.Base {
        let digest: String
        if let record = records.last(where: { matches($0, selector) }) {
            digest = record.head.table
        } else if ReleaseIndex.isTableDigest(selector.lowercased()) {
            digest = selector.lowercased()
        } else {
            let lower = selector.lowercased()
            let tables = objects.keys.filter { $0.hasPrefix(ReleaseIndex.folder + "/t/") && $0.hasSuffix(".json") }
                .map { String($0.dropFirst(ReleaseIndex.folder.count + 3).dropLast(5)) }
                .filter { lower.utf8.count >= 8 && $0.hasPrefix(lower) }
            guard tables.count == 1, let only = tables.first else {
                throw .notFound(tables.isEmpty ? "--from \(selector): no release or table of that name in \(destination.description)"
                                : "--from \(selector): names \(tables.count) tables; give more of its digits")
            }
            digest = only
        }
        let key = ReleaseHead.tablePath(digest)
        guard let bytes = try destination.read(key), ReleaseIndex.tableDigest(bytes) == digest else {
            throw .integrity("\(destination.description)\(key), the table of --from \(selector), is missing or not what its name says")
        }
        let table = try RouteTable.parse(bytes, source: key)
        return BundlePlan.Base(digest: digest, hashes: Set(table.entries.map(\.hash)))
    }

    private static func matches(_ record: ReleaseRecord, _ selector: String) -> Bool {
        if String(record.head.version) == selector { return true }
        let name = record.head.release.flatMap { try? ReleaseManifest.parse($0, source: record.key) }?.release
        return name == selector
    }
}
