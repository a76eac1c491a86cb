import RouteSync

/// One page of a ListObjectsV2 answer: each object's key, size, last write and ETag, and the
/// token of the next page when the listing is truncated. An entry without a key or a size is
/// left out (a listing from a store is outside input: FuzzS3Listing).
package struct S3Listing: Sendable {
    package var objects: [(key: String, object: StoredObject)] = []
    package var next: String?

    package init(_ page: [UInt8]) {
        for block in XMLText.blocks("Contents", in: page[...]) {
            guard let key = XMLText.text("Key", in: block), !key.isEmpty,
                  let size = XMLText.text("Size", in: block).flatMap({ Int64($0) }), size >= 0 else { continue }
            let modified = XMLText.text("LastModified", in: block).flatMap(XMLText.time) ?? 0
            let etag = XMLText.text("ETag", in: block).map { $0.trimmingCharacters(in: "\"").lowercased() }
            objects.append((key, StoredObject(size: size, modified: modified, etag: etag)))
        }
        let token = XMLText.first("IsTruncated", in: page) == "true" ? XMLText.first("NextContinuationToken", in: page) : nil
        next = token?.isEmpty == false ? token : nil
    }
}
