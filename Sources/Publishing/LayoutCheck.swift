package import RouteSync

/// Which of the Cenarius layout's files (the default channel's files at their uris) already hold
/// the bytes a table lists, checked against the objects themselves: a store's MD5 ETag, a folder's
/// file hashed. A publish that failed after writing some files at their uris (and before
/// `Routes.json` and the head) leaves them disagreeing with the table in force, so "the served
/// table lists this hash" proves nothing about the object there; only its bytes do.
package enum LayoutCheck {
    /// The uris of `table` whose object at `destination` holds the file of `build` it lists.
    package static func matching(_ table: RouteTable, build: String, in destination: some Destination,
                                 objects: [String: StoredObject]) throws(CenariusError) -> Set<String> {
        var matching = Set<String>()
        for entry in table.entries {
            let uri = entry.uri.value
            guard let present = objects[uri], present.size == entry.size ?? present.size,
                  let there = try destination.contentMD5(uri, listed: present) else { continue }
            let wanted = entry.hash.algorithm == .md5 ? entry.hash.hex : try FileSystem.hashFile(FileSystem.join(build, uri), algorithm: .md5).0.hex
            if there == wanted { matching.insert(uri) }
        }
        return matching
    }

    /// Whether `text` is an MD5 in hex, as a store's ETag is for an object written in one PUT
    /// (not for a multipart upload or some encryptions: those are never taken as matching).
    static func isMD5(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

extension FolderDestination {
    package func contentMD5(_ key: String, listed: StoredObject) throws(CenariusError) -> String? {
        (try? FileSystem.hashFile(FileSystem.join(root, key), algorithm: .md5))?.0.hex
    }
}

extension S3Destination {
    package func contentMD5(_ key: String, listed: StoredObject) throws(CenariusError) -> String? {
        listed.etag.map { $0.lowercased() }.flatMap { LayoutCheck.isMD5($0) ? $0 : nil }
    }
}
