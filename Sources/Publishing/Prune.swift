package import RouteSync

/// What `prune` may delete: store objects that no kept release of any channel names and that are
/// older than the protection window. It fails closed — a kept release whose table or index cannot
/// be read stops it, and only names of the store's own kinds are ever candidates — and it never
/// touches the Cenarius layout (the files at their uris, `Routes.json`, heads).
package struct Prune: Sendable {
    /// Keys to delete, and what they hold.
    package var deletions: [String] = []
    package var bytes: Int64 = 0
    /// Store objects kept because a kept release names them.
    package var referenced = 0
    /// Unreferenced, but younger than the window (a publish may be writing them now).
    package var protected = 0
    /// The releases kept, by channel and version.
    package var kept: [String: [Int64]] = [:]

    /// The store's own kinds of name: anything else under `_cenarius/` is someone else's and stays.
    static let kinds = ["t/", "i/", "z/", "p/", "f/", "pack/", "r/"].map { ReleaseIndex.folder + "/" + $0 }

    /// Every key a release's head names, directly or through its index: what devices fetch for it.
    package static func references(of head: ReleaseHead, table: RouteTable, index: ReleaseIndex) -> Set<String> {
        var keys = Set(head.objects.map(\.path))
        keys.insert(ReleaseRecord.key(channel: head.channel, version: head.version))
        keys.formUnion(index.objects(for: table))
        return keys
    }

    /// Plans the deletion, given the remote's objects and the keys the kept releases name.
    package init(objects: [String: StoredObject], referenced keep: Set<String>, olderThan cutoff: Double) {
        for (key, object) in objects.sorted(by: { $0.key < $1.key }) where Self.kinds.contains(where: key.hasPrefix) {
            if keep.contains(key) {
                referenced += 1
            } else if object.modified < cutoff {
                deletions.append(key)
                bytes += object.size
            } else {
                protected += 1
            }
        }
    }
}
