#if canImport(Glibc)
import Glibc
#endif
package import RouteSync

/// What a publish writes, in the only order that keeps every device whole (docs/publish.md):
/// 1. store objects the remote lacks (content-addressed: present means the same bytes),
/// 2. the release record and the files at their uris that changed, then the removal of a sidecar
///    the new release no longer has and of an earlier version's compressed table,
/// 3. one at a time: the sidecars, `Routes.json`, and the head, the channel's commit point, last.
/// A publish killed anywhere leaves the channel's head on the previous release, whose objects
/// are all still there; run again, it writes only what is missing.
package struct UploadPlan: Sendable {
    package var store: [Upload] = []
    package var layout: [Upload] = []
    package var removals: [String] = []
    package var last: [Upload] = []
    /// What the remote already held.
    package var skipped = 0
    package var skippedBytes: Int64 = 0

    package var uploads: [Upload] { store + layout + last }
    /// What the publisher sends: a copy the destination makes on its side sends nothing.
    package var bytes: Int64 { uploads.reduce(0) { $0 + $1.sent } }

    /// The release staged in `staging` (what `routes --out-dir` wrote) and the files of `build`
    /// its table lists, against what the remote holds.
    package init(staging: String, build: String, table: RouteTable, record: ReleaseRecord,
                 remote: RemoteState, pointerMaxAge: Int) throws(CenariusError) {
        let routesName = remote.routesName
        func upload(_ key: String, _ body: Upload.Body, size: Int64) -> Upload {
            Upload(key: key, body: body, size: size, contentType: ContentType.of(key),
                   cacheControl: ObjectClass(key: key).cacheControl(pointerMaxAge: pointerMaxAge))
        }
        var pointers: [String: Upload] = [:]
        for (key, size) in Self.files(in: staging) {
            let body = Upload.Body.file(FileSystem.join(staging, key))
            if ObjectClass(key: key) == .store {
                if remote.objects[key] != nil {
                    skipped += 1
                    skippedBytes += size
                } else {
                    store.append(upload(key, body, size: size))
                }
            } else {
                pointers[key] = upload(key, body, size: size)
            }
        }
        let recordBytes = record.serialized()
        if remote.objects[record.key] == nil { layout.append(upload(record.key, .bytes(recordBytes), size: Int64(recordBytes.count))) }

        if remote.isDefaultChannel {
            // The Cenarius layout: what Cenarius clients and devices before heads read.
            for entry in table.entries {
                let size = entry.size ?? 0
                // Only bytes checked at the uri count (LayoutCheck): a failed publish may have left others there.
                if let present = remote.objects[entry.uri.value], remote.layoutMatching?.contains(entry.uri.value) == true {
                    skipped += 1
                    skippedBytes += present.size
                    continue
                }
                layout.append(upload(entry.uri.value, .file(FileSystem.join(build, entry.uri.value)), size: size))
            }
            var table = pointers.removeValue(forKey: routesName)
            // The table the remote serves already, byte for byte (halt, resume, a re-signing): only
            // its sidecars and the head change. Its Cache-Control stays the one it was written with.
            if let staged = table, remote.objects[routesName] != nil, let served = remote.tableBytes,
               Int64(served.count) == staged.size, case .file(let path) = staged.body, (try? FileSystem.readFile(path)) == served {
                skipped += 1
                skippedBytes += staged.size
                table = nil
            }
            for sidecar in [routesName + ".release", routesName + ".sig"] where pointers[sidecar] == nil && remote.objects[sidecar] != nil {
                // A sidecar of the previous release beside the new table would apply to it.
                removals.append(sidecar)
            }
            // An earlier version's compressed table: devices that saw it poll it, and would stay on its release.
            let legacyForm = ReleaseIndex.tablePath(routesName)
            if pointers[legacyForm] == nil, remote.objects[legacyForm] != nil { removals.append(legacyForm) }
            let head = pointers.removeValue(forKey: remote.headKey)
            // The names that must agree with each other, one at a time and as late as they can be:
            // a Cenarius client reading between two of them sees a mismatch for the shortest time.
            last = pointers.values.sorted { $0.key < $1.key } + [table, head].compactMap { $0 }
        } else if let head = pointers[remote.headKey] {
            last = [head]
        }
        if last.last?.key != remote.headKey { throw .internal("the staged release has no head \(remote.headKey)") }
        copyFromStore(table: table, digest: record.head.table, remote: remote)
    }

    /// Every regular file under `root`, relative, with its size.
    static func files(in root: String, _ relative: String = "") -> [(String, Int64)] {
        var found: [(String, Int64)] = []
        for name in FileSystem.listDirectory(relative.isEmpty ? root : FileSystem.join(root, relative)).sorted() {
            let key = relative.isEmpty ? name : relative + "/" + name
            let path = FileSystem.join(root, key)
            if FileSystem.kind(path) == S_IFDIR {
                found += files(in: root, key)
            } else if let size = FileSystem.regularFileSize(path), !name.contains(".tmp-") {
                found.append((key, size))
            }
        }
        return found
    }
}
