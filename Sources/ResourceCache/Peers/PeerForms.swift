package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The forms a device took from the origin for its share of a release (a file compressed, a patch
/// from the release before), kept by their store names so that its LAN peers decode them as they
/// would the origin's (docs/peers.md): a release crosses the LAN as patches, not as the files.
/// Kept only by a device that is one of its peers (PeerSources.me), and only for the files of the
/// release being fetched: a sync of a new release removes the others (`prune`), so the folder holds
/// at most the forms of one table's files.
package struct PeerForms: Sendable {
    package let folder: String

    package init(layout: CacheLayout) {
        folder = layout.peerForms
    }

    /// A form's store name (`_cenarius/z/<hash>.zst`, `_cenarius/p/<target>-<base>.zst`) as its
    /// file name here, and the file it decodes to; nil for any other path.
    package static func name(_ path: Substring) -> (name: String, target: ContentHash)? {
        let compressed = ReleaseIndex.folder + "/z/", patch = ReleaseIndex.folder + "/p/"
        let isPatch = path.hasPrefix(patch)
        guard isPatch || path.hasPrefix(compressed), path.hasSuffix(".zst") else { return nil }
        let name = path.dropFirst(isPatch ? patch.utf8.count : compressed.utf8.count)
        let stem = name.dropLast(4)
        let hexes = isPatch ? stem.split(separator: "-", omittingEmptySubsequences: false) : [stem]
        guard hexes.count == (isPatch ? 2 : 1), let target = hash(hexes[0]), !isPatch || hash(hexes[1]) != nil else { return nil }
        return (String(name), target)
    }

    /// A hash written as the store writes it: 32 or 64 lower-case hex digits, nothing else.
    private static func hash(_ hex: Substring) -> ContentHash? {
        guard hex.utf8.count == 32 || hex.utf8.count == 64, let hash = ContentHash(hex: String(hex)), hash.hex == hex else { return nil }
        return hash
    }

    /// Where the form named `name` (from `name(_:)`) is kept.
    package func path(_ name: String) -> String { folder + "/" + name }

    /// `file`, a form at store path `path` that decoded to its file's hash, moved here.
    package func keep(_ file: String, as path: String) {
        guard let (name, _) = Self.name(Substring(path)) else { return }
        mkdir(folder, 0o755)
        rename(file, self.path(name))
    }

    /// Every form kept for a file not in `table`: what a device keeps is one release's forms.
    package func prune(keeping table: Set<ContentHash>) {
        for name in FileSystem.listDirectory(folder) {
            if let (_, target) = Self.name(Substring(ReleaseIndex.folder + "/" + (name.utf8.contains(UInt8(ascii: "-")) ? "p/" : "z/") + name)), table.contains(target) { continue }
            unlink(path(name))
        }
    }
}
