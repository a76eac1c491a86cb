import Publishing
import RouteSync

/// `routes --check`: what in DIR besides the table disagrees with it, so that devices polling
/// the head or an earlier version's compressed table get the release the table describes.
extension RoutesCommand {
    /// Why the compressed table beside the table is not its form (nil: it is, or there is none).
    func staleTableForm(table: [UInt8]) -> String? {
        let tableFormPath = ReleaseWriter.legacyTableFormPath(root: directory, routesName: routesName)
        guard FileSystem.exists(tableFormPath) else { return nil }
        guard Zstd.isAvailable else {
            Output.warn("cannot check \(tableFormPath): libzstd is not available on this machine")
            return nil
        }
        guard let bytes = try? FileSystem.readFile(tableFormPath, limit: 64 << 20),
              let frames = try? Zstd.decompressFrames(bytes, limit: 64 << 20), frames.first == table else {
            return "\(tableFormPath) is not the compressed form of this table (devices that poll it get another release): run routes again"
        }
        return nil
    }

    /// Why the head beside the table does not agree with it (nil: it does, or there is none).
    func staleHead(table: [UInt8]) -> String? {
        let headPath = FileSystem.join(directory, ReleaseHead.name(routesName: routesName, channel: channel))
        guard FileSystem.exists(headPath) else { return nil }
        guard let bytes = try? FileSystem.readFile(headPath, limit: ReleaseHead.maxBytes),
              let head = try? ReleaseHead.parse(bytes, source: headPath) else { return "\(headPath) is not a head this version reads: run routes again" }
        guard head.table == ReleaseIndex.tableDigest(table), head.tableSize == Int64(table.count) else {
            return "\(headPath) names another table (devices that poll it get another release): run routes again"
        }
        for (relative, digest) in head.objects {
            guard let object = try? FileSystem.readFile(FileSystem.join(directory, relative), limit: 64 << 20),
                  ReleaseIndex.tableDigest(object) == digest else {
                return "\(FileSystem.join(directory, relative)), which \(headPath) names, is missing or not what its name says: run routes again"
            }
        }
        return staleIndex(of: head, table: table, headPath: headPath)
    }

    /// What the index names for the table's files: a store that lost one (an upload that skipped
    /// a folder) costs devices a fallback at best.
    private func staleIndex(of head: ReleaseHead, table: [UInt8], headPath: String) -> String? {
        guard let digest = head.index,
              let bytes = try? FileSystem.readFile(FileSystem.join(directory, ReleaseHead.indexPath(digest)), limit: 32 << 20),
              let index = try? ReleaseIndex.parse(bytes, source: headPath), let parsed = try? RouteTable.parse(table, source: headPath) else { return nil }
        for relative in index.objects(for: parsed) where index.storedPlain || !relative.hasPrefix(ReleaseIndex.folder + "/f/") {
            guard FileSystem.regularFileSize(FileSystem.join(directory, relative)) != nil else {
                return "\(FileSystem.join(directory, relative)), which the release index names, is missing: run routes again (or upload the whole folder)"
            }
        }
        return nil
    }
}
