#if canImport(Glibc)
import Glibc
#endif
package import RouteSync

/// Writes a bundle: as one POSIX tar streamed to a descriptor (the manifest first, then every
/// member in the plan's order, each read from the source as it is written), or as a folder that
/// is itself a remote (every member written to a temporary name and renamed, the manifest last:
/// a folder whose writing broke off has no manifest, and `import` refuses it whole).
package struct BundleWriter {
    package let source: any Destination
    package let plans: [BundlePlan]
    /// The bundle's time: every member's mtime, and the manifest's `created`.
    package let created: Int64

    package init(source: any Destination, plans: [BundlePlan], created: Int64) {
        self.source = source
        self.plans = plans
        self.created = created
    }

    /// The store objects of every plan once each, in order, with their sizes from the listing.
    package func members(listing: [String: StoredObject]) throws(CenariusError) -> [BundleManifest.Member] {
        var seen = Set<String>()
        var members = plans.map { BundleManifest.Member(name: $0.headKey, size: Int64($0.headBytes.count)) }
        for plan in plans {
            for key in plan.objects where seen.insert(key).inserted {
                guard let object = listing[key] else {
                    throw .integrity("\(source.description)\(key), which release \(plan.release.version) of channel \(plan.release.channel) needs, is missing (pruned?)")
                }
                members.append(BundleManifest.Member(name: key, size: object.size))
            }
        }
        return members
    }

    package func manifest(_ members: [BundleManifest.Member]) -> BundleManifest {
        BundleManifest(created: created, releases: plans.map(\.release), members: members)
    }

    /// The member's bytes: a head from the plan, a store object from the source, checked against
    /// the size the listing gave (the manifest promised it).
    private func bytes(of member: BundleManifest.Member) throws(CenariusError) -> [UInt8] {
        if let plan = plans.first(where: { $0.headKey == member.name }) { return plan.headBytes }
        guard let bytes = try source.read(member.name, limit: Int(clamping: member.size) + 1), Int64(bytes.count) == member.size else {
            throw .integrity("\(source.description)\(member.name) changed or went while the bundle was written")
        }
        return bytes
    }

    /// The tar, to `fd`; `progress` after each member with the bytes written so far.
    package func writeTar(to fd: Int32, members: [BundleManifest.Member], progress: (Int, Int64) -> Void) throws(CenariusError) {
        let manifest = manifest(members).serialized()
        var written: Int64 = 0
        func emit(_ bytes: [UInt8]) throws(CenariusError) {
            guard FileSystem.writeAll(fd, bytes) else { throw .storage("cannot write the bundle: \(FileSystem.errnoText())") }
            written += Int64(bytes.count)
        }
        try emit(TarHeader.file(BundleManifest.name, size: Int64(manifest.count), mtime: created) + manifest + TarHeader.padding(Int64(manifest.count)))
        for (n, member) in members.enumerated() {
            guard member.size <= TarHeader.maxSize else { throw .usage("\(member.name) is \(member.size) bytes: more than a tar member holds") }
            let bytes = try bytes(of: member)
            try emit(TarHeader.file(member.name, size: member.size, mtime: created) + bytes + TarHeader.padding(member.size))
            progress(n + 1, written)
        }
        try emit(TarHeader.end)
    }

    /// The folder at `root` (made when missing), the manifest last.
    package func writeFolder(_ root: String, members: [BundleManifest.Member], progress: (Int, Int64) -> Void) throws(CenariusError) {
        var written: Int64 = 0
        // A manifest of another bundle in the folder goes first: until the new one is written the folder is no bundle.
        unlink(FileSystem.join(root, BundleManifest.name))
        for (n, member) in members.enumerated() {
            let path = FileSystem.join(root, member.name)
            let bytes = try bytes(of: member)
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
            try FileSystem.writeAtomically(bytes, to: path)
            written += member.size
            progress(n + 1, written)
        }
        // A bundle made into the same folder before leaves nothing of its own: a stick rewritten
        // for the next release holds that release, not every one it carried.
        let kept = Set(members.map(\.name))
        var stale = FileSystem.listDirectory(root).filter { BundleLayout.isHead($0) && !kept.contains($0) }
        for folder in BundleLayout.storeFolders {
            let relative = ReleaseIndex.folder + "/" + folder
            stale += FileSystem.listDirectory(FileSystem.join(root, relative)).map { relative + "/" + $0 }.filter { BundleLayout.isStoreObject($0) && !kept.contains($0) }
        }
        for name in stale { unlink(FileSystem.join(root, name)) }
        try FileSystem.writeAtomically(manifest(members).serialized(), to: FileSystem.join(root, BundleManifest.name))
    }
}
