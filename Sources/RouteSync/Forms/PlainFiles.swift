/// The files of a release that have no compressed form (`_cenarius/z/`): a device fetches them
/// whole. An index names them (`"plain"`), or, when fewer, names the files that do have a form
/// (`"compressed"`: every other file of the table is plain). After a first publish most files
/// live in the solid pack alone and have no form, so the second spelling keeps a release's index
/// about its changes instead of a line per file of the site (B9 v2). An index from before reads
/// as `"plain"`; a device from before that meets `"compressed"` asks for a form first and takes
/// the file whole on a 404, as it does for any missing form.
package struct PlainFiles: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The hashes named; plain ones, or, when `inverted`, the ones with a form.
    private var named: Set<ContentHash>
    private(set) var inverted: Bool

    package init(_ plain: Set<ContentHash>) {
        named = plain
        inverted = false
    }

    package init(arrayLiteral elements: ContentHash...) { self.init(Set(elements)) }

    /// Every file but `compressed` is plain.
    package static func allBut(_ compressed: Set<ContentHash>) -> PlainFiles {
        var files = PlainFiles(compressed)
        files.inverted = true
        return files
    }

    package func contains(_ hash: ContentHash) -> Bool { named.contains(hash) != inverted }

    package mutating func insert(_ hash: ContentHash) {
        if inverted { named.remove(hash) } else { named.insert(hash) }
    }

    package mutating func remove(_ hash: ContentHash) {
        if inverted { named.insert(hash) } else { named.remove(hash) }
    }

    /// The spelling with fewer hashes for a table whose distinct hashes are `table`.
    package func compacted(for table: Set<ContentHash>) -> PlainFiles {
        let plain = inverted ? table.subtracting(named) : named.intersection(table)
        let compressed = table.subtracting(plain)
        return compressed.count < plain.count ? .allBut(compressed) : PlainFiles(plain)
    }

    /// The index's member: `"plain": [...]` or `"compressed": [...]`, hashes sorted.
    var member: String {
        "\"\(inverted ? "compressed" : "plain")\": [" + named.map { "\"\($0.hex)\"" }.sorted().joined(separator: ", ") + "]"
    }
}
