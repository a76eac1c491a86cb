package import RouteSync

/// Where `publish` and the commands after it write a remote: a folder, or an S3-compatible
/// object store. Every name is a key relative to the remote's root (`Routes.head`,
/// `_cenarius/z/<H>.zst`, `index.html`), never a path or a URL, so the publishing order and
/// the cache lifetimes are decided once (`UploadPlan`) whatever the destination.
package protocol Destination: Sendable {
    /// What a person recognises the destination by, without credentials.
    var description: String { get }
    /// Every object under `prefix` (a key prefix, `""` for all): one listing, never a request per object.
    func list(prefix: String) throws(CenariusError) -> [String: StoredObject]
    /// The object's bytes, or nil when there is no such object.
    func read(_ key: String, limit: Int) throws(CenariusError) -> [UInt8]?
    /// The bytes of those of `keys` that exist, by key; several at once where the destination allows it.
    func read(_ keys: [String], limit: Int) throws(CenariusError) -> [String: [UInt8]]
    /// Writes every upload, each whole or not at all (a reader never sees half an object);
    /// several at once where the destination allows it. `progress` is called after each one.
    func write(_ uploads: [Upload], progress: (Upload) -> Void) throws(CenariusError)
    /// Removes the objects; one already gone is not an error.
    func delete(_ keys: [String], progress: (String) -> Void) throws(CenariusError)
    /// The MD5 of the object's bytes (`listed` is its listing), or nil when the destination cannot tell cheaply.
    func contentMD5(_ key: String, listed: StoredObject) throws(CenariusError) -> String?
    /// Holds off every other writer of the destination until the lock is released (`PublishLock`);
    /// while another holds it, says so once through `waiting` and waits.
    func lock(waiting: (String) -> Void) throws(CenariusError) -> any PublishLock
    /// The same; `claimed` is called as soon as an attempt's claim is written (a store's lease,
    /// before it settles) and again at each later attempt, so that work begun there (reading
    /// the remote again, writing store objects: `S3Destination.lock`) overlaps the settling, and
    /// the last call's is the holder's. Nothing another publisher writes or deletes lands after a
    /// claim that ends up holding the lock.
    func lock(waiting: (String) -> Void, claimed: () -> Void) throws(CenariusError) -> any PublishLock
}

extension Destination {
    package func read(_ keys: [String], limit: Int) throws(CenariusError) -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        for key in keys { found[key] = try read(key, limit: limit) }
        return found
    }

    /// A lock taken in one step: claimed once held.
    package func lock(waiting: (String) -> Void, claimed: () -> Void) throws(CenariusError) -> any PublishLock {
        let lock = try lock(waiting: waiting)
        claimed()
        return lock
    }
}

/// One object as a listing shows it.
package struct StoredObject: Sendable, Equatable {
    package var size: Int64
    /// Unix seconds of its last write (S3's `LastModified`, a file's mtime).
    package var modified: Double
    /// S3's ETag unquoted: the MD5 of the bytes for an object written in one PUT.
    package var etag: String?
    package init(size: Int64, modified: Double, etag: String? = nil) {
        self.size = size
        self.modified = modified
        self.etag = etag
    }
}

/// One object to write: its key, its bytes (in memory or a file of the build folder), and the
/// headers an HTTP server or CDN gives it.
package struct Upload: Sendable {
    package enum Body: Sendable {
        case bytes([UInt8])
        case file(String)
        /// The bytes of the store object at this key, which the destination holds or this plan
        /// writes in an earlier phase: copied on the destination's side (S3's `x-amz-copy-source`),
        /// so none of them cross the publisher's link again.
        case copy(String)
    }

    package var key: String
    package var body: Body
    package var size: Int64
    package var contentType: String
    package var cacheControl: String

    package init(key: String, body: Body, size: Int64, contentType: String, cacheControl: String) {
        self.key = key
        self.body = body
        self.size = size
        self.contentType = contentType
        self.cacheControl = cacheControl
    }

    /// The bytes this upload sends: none for a copy.
    package var sent: Int64 {
        if case .copy = body { 0 } else { size }
    }

    package func bytes() throws(CenariusError) -> [UInt8] {
        switch body {
        case .bytes(let bytes): bytes
        case .file(let path): try FileSystem.readFile(path)
        case .copy(let key): throw .internal("\(self.key) is a copy of \(key), which only its destination can make")
        }
    }
}

extension Destination {
    /// The object's bytes as text-limited metadata (heads, records, tables): at most 64 MiB.
    package func read(_ key: String) throws(CenariusError) -> [UInt8]? { try read(key, limit: 64 << 20) }
}

/// `--to DEST`: a folder, `file://PATH`, or `s3://BUCKET/PREFIX`.
package enum DestinationAddress: Sendable, Equatable {
    case folder(String)
    case s3(bucket: String, prefix: String)

    package init(_ text: String) throws(CenariusError) {
        if text.hasPrefix("s3://") {
            let rest = text.dropFirst(5)
            let bucket = rest.prefix { $0 != "/" }
            var prefix = String(rest.dropFirst(bucket.count)).trimmingSlashes
            if !prefix.isEmpty { prefix += "/" }
            guard S3Address.isBucketName(String(bucket)) else {
                throw .usage("\(text): not an s3://BUCKET/PREFIX address (a bucket is 3 to 63 lower-case letters, digits, dots and hyphens)")
            }
            self = .s3(bucket: String(bucket), prefix: prefix)
        } else if text.hasPrefix("file://") {
            let path = String(text.dropFirst(7))
            guard path.hasPrefix("/") else { throw .usage("\(text): a file:// address needs an absolute path (file:///srv/www)") }
            self = .folder(path)
        } else if text.contains("://") {
            throw .usage("\(text): publish writes to a folder, file://PATH or s3://BUCKET/PREFIX (an HTTP server is read-only to it)")
        } else {
            guard !text.isEmpty else { throw .usage("--to needs a folder or s3://BUCKET/PREFIX") }
            self = .folder(text)
        }
    }
}

extension String {
    var trimmingSlashes: String {
        var text = Substring(self)
        while text.hasPrefix("/") { text = text.dropFirst() }
        while text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}
