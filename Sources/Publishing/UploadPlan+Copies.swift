import RouteSync

extension UploadPlan {
    /// Below this, a copy saves less than its own request costs.
    static let copyThreshold: Int64 = 16 << 10

    /// How many uploads the destination copies from its own store objects.
    package var copies: Int { uploads.filter { if case .copy = $0.body { true } else { false } }.count }

    /// Layout files whose exact bytes are a store object too — the table (`_cenarius/t/<S>.json`),
    /// a file whose plain bytes the store keeps (`_cenarius/f/<H>`) — are copied from it on the
    /// destination's side rather than sent twice: on a one-file release of a large site the table
    /// is most of what a publish would send (B9 v2). The source is one the remote lists or this
    /// plan writes in its store phase, which ends before the layout's begins. `digest`: the head's
    /// table, the bytes staged at `Routes.json`.
    mutating func copyFromStore(table: RouteTable, digest: String, remote: RemoteState) {
        let storeKeys = Set(store.map(\.key))
        func held(_ key: String) -> Bool { storeKeys.contains(key) || remote.objects[key] != nil }
        var hashes: [String: ContentHash] = [:]
        for entry in table.entries { hashes[entry.uri.value] = entry.hash }
        func source(of upload: Upload) -> String? {
            guard upload.size >= Self.copyThreshold else { return nil }
            if upload.key == remote.routesName {
                let key = ReleaseHead.tablePath(digest)
                return held(key) ? key : nil
            }
            guard let hash = hashes[upload.key] else { return nil }
            let key = ReleaseIndex.plainPath(hash)
            return held(key) ? key : nil
        }
        for i in layout.indices { if let key = source(of: layout[i]) { layout[i].body = .copy(key) } }
        for i in last.indices { if let key = source(of: last[i]) { last[i].body = .copy(key) } }
    }
}
