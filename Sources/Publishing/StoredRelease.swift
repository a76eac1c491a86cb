package import RouteSync

/// A release rebuilt from the store alone: its table from `_cenarius/t/`, each file from its
/// compressed form or its plain bytes, checked against the table's hash. `rollback`, `promote`,
/// `halt` and `resume` republish such a release, so none of them needs the build folder it came
/// from. An object missing or not what its name says stops it (nothing is published).
package enum StoredRelease {
    package struct Parts: Sendable {
        package var tableBytes: [UInt8]
        package var table: RouteTable
        package var index: ReleaseIndex
        /// The index's exact bytes, as the head names them.
        package var indexBytes: [UInt8]
    }

    package static func parts(of head: ReleaseHead, from destination: some Destination) throws(CenariusError) -> Parts {
        guard let tableBytes = try destination.read(ReleaseHead.tablePath(head.table)), ReleaseIndex.tableDigest(tableBytes) == head.table else {
            throw .integrity("\(destination.description)\(ReleaseHead.tablePath(head.table)) is missing or not what its name says")
        }
        guard let digest = head.index, let indexBytes = try destination.read(ReleaseHead.indexPath(digest)), ReleaseIndex.tableDigest(indexBytes) == digest else {
            throw .integrity("release \(head.version) of channel \(head.channel) has no release index in the store (published by routes and copied by hand?): publish its build folder instead")
        }
        let table = try RouteTable.parse(tableBytes, source: ReleaseHead.tablePath(head.table))
        return Parts(tableBytes: tableBytes, table: table, index: try ReleaseIndex.parse(indexBytes, source: ReleaseHead.indexPath(digest)),
                     indexBytes: indexBytes)
    }

    /// Writes every file of the release under `folder`, handing each compressed form read to
    /// `forms` by its key (a republish takes them as they are: FormPublisher.heldForms); returns
    /// the bytes read from the store.
    package static func materialize(_ parts: Parts, from destination: some Destination, into folder: String,
                                    forms: ((String, [UInt8]) -> Void)? = nil) throws(CenariusError) -> Int64 {
        var read: Int64 = 0
        var bytesOf: [ContentHash: [UInt8]] = [:]
        // Files the store holds in a solid pack rather than on their own (FormPublisher.formsAtURI).
        var packed: [ContentHash: [RouteEntry]] = [:]
        for entry in parts.table.entries {
            if !parts.index.storedPlain, parts.index.plain.contains(entry.hash) {
                packed[entry.hash, default: []].append(entry)
                continue
            }
            let bytes: [UInt8]
            if let known = bytesOf[entry.hash] {
                bytes = known
            } else {
                let plain = parts.index.plain.contains(entry.hash)
                let stored = try fetch(entry.hash, plain: plain, from: destination)
                bytes = stored.bytes
                read += Int64(stored.read)
                if !plain { forms?(ReleaseIndex.formPath(entry.hash), stored.form) }
                // Held only while a second uri may want them: most hashes appear once.
                bytesOf[entry.hash] = bytes.count <= 1 << 20 ? bytes : nil
            }
            let path = FileSystem.join(folder, entry.uri.value)
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
            try FileSystem.writeAtomically(bytes, to: path, durable: false)
        }
        if !packed.isEmpty { read += try unpack(&packed, parts: parts, from: destination, into: folder) }
        // What no pack held: its exact bytes under `f/`, as an index without `storedPlain` may still have them.
        for entry in packed.values.joined() {
            let stored = try fetch(entry.hash, plain: true, from: destination)
            read += Int64(stored.read)
            let path = FileSystem.join(folder, entry.uri.value)
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
            try FileSystem.writeAtomically(stored.bytes, to: path, durable: false)
        }
        return read
    }

    /// The file's bytes, its stored form (the bytes themselves for a plain one), and what was read.
    private static func fetch(_ hash: ContentHash, plain: Bool, from destination: some Destination) throws(CenariusError) -> (bytes: [UInt8], form: [UInt8], read: Int) {
        let key = plain ? ReleaseIndex.plainPath(hash) : ReleaseIndex.formPath(hash)
        let limit = 1 << 30
        guard let stored = try destination.read(key, limit: limit) else { throw .integrity("\(destination.description)\(key) is missing: the release cannot be rebuilt from the store") }
        let bytes: [UInt8]
        if plain {
            bytes = stored
        } else {
            do { bytes = try Zstd.decompress(stored, limit: limit) } catch { throw .integrity("\(destination.description)\(key) does not decode: \(error)") }
        }
        guard StreamingHasher.hash(bytes, hash.algorithm) == hash else { throw .integrity("\(destination.description)\(key) is not what its name says") }
        return (bytes, stored, stored.count)
    }
}
