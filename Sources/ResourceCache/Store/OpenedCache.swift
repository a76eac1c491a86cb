package import RouteSync

/// The folders a writer works in, opened by descriptor (`CacheFolder`) and repaired on the way:
/// anything but a real folder where `objects/`, `tmp/` or `generations/` belongs is removed as an
/// entry and the folder made again, so a planted link is never a way out of the cache (G5).
/// Opened once per sync, under the writer lock.
package struct OpenedCache: Sendable {
    package let layout: CacheLayout
    package let root: CacheFolder
    package let objects: CacheFolder
    package let tmp: CacheFolder
    package let generations: CacheFolder

    package init(layout: CacheLayout) throws(CenariusError) {
        guard let root = try CacheFolder.root(layout.root) else { throw .storage("cannot create the cache \(layout.root)") }
        self.layout = layout
        self.root = root
        objects = try Self.folder("objects", in: root)
        tmp = try Self.folder("tmp", in: root)
        generations = try Self.folder("generations", in: root)
    }

    private static func folder(_ name: String, in root: CacheFolder) throws(CenariusError) -> CacheFolder {
        guard let folder = try root.folder(name) else { throw .storage("cannot create directory \(root.path)/\(name)") }
        return folder
    }

    /// `objects/<h0h1>`, the folder an object lives in.
    package func shard(of hash: ContentHash, create: Bool = true) throws(CenariusError) -> CacheFolder? {
        try objects.folder(String(hash.hex.prefix(2)), create: create)
    }
}
