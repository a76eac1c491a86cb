#if canImport(Glibc)
import Glibc
#endif
package import RouteSync
package import Transport

/// A remote served over http(s) as `bundle`'s source: read by name through libcurl (the
/// Transport every request goes through), as a device reads it. It cannot be listed, so only
/// what the head names is known: the head's release, and bases given by their table's SHA-256.
/// Read-only: nothing is ever written to it.
package struct HTTPSource: Destination {
    package let base: String
    package let options: TransferOptions

    package init(base: String, options: TransferOptions) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.options = options
    }

    package static func isHTTP(_ text: String) -> Bool { text.hasPrefix("http://") || text.hasPrefix("https://") }

    package var description: String { Secrets.redact(base) + "/" }

    package func list(prefix: String) throws(CenariusError) -> [String: StoredObject] { [:] }

    package func read(_ key: String, limit: Int) throws(CenariusError) -> [UInt8]? {
        let downloader = try Downloader(options: options)
        do throws(CenariusError) {
            guard case .content(let body, _) = try downloader.fetchDocument(base + "/" + key, validators: nil, maxBytes: Int64(limit), options: .identity) else {
                throw CenariusError.remote("\(description)\(key) answered 304 to a request without validators")
            }
            return body
        } catch where error.isMissingRemoteFile || error.cause == .httpStatus(403) || error.cause == .httpStatus(410) {
            // 403: what a public bucket answers for a key it does not hold.
            return nil
        }
    }

    package func write(_ uploads: [Upload], progress: (Upload) -> Void) throws(CenariusError) { throw readOnly }
    package func delete(_ keys: [String], progress: (String) -> Void) throws(CenariusError) { throw readOnly }
    package func contentMD5(_ key: String, listed: StoredObject) throws(CenariusError) -> String? { nil }
    package func lock(waiting: (String) -> Void) throws(CenariusError) -> any PublishLock { throw readOnly }

    private var readOnly: CenariusError { .usage("\(description) is an http(s) remote: bundle reads it, nothing writes to it") }

    /// The channel's head as the remote serves it (no records: a remote over HTTP is not listed).
    package func state(channel: String, routesName: String) throws(CenariusError) -> RemoteState {
        var state = RemoteState(objects: [:], channel: channel, routesName: routesName, records: [])
        guard let bytes = try read(state.headKey, limit: ReleaseHead.maxBytes) else {
            throw .notFound("\(description)\(state.headKey) is missing: channel \(channel) has no head there")
        }
        state.headBytes = bytes
        state.head = try ReleaseHead.parse(bytes, source: description + state.headKey)
        return state
    }

    /// Fetches `keys` into `folder` (a private temporary folder), whose listing then stands for
    /// the remote's: a tar member's size is written before its bytes.
    package func mirror(_ keys: [String], into folder: String) throws(CenariusError) -> [String: StoredObject] {
        var listing: [String: StoredObject] = [:]
        for key in keys where listing[key] == nil {
            guard let bytes = try read(key, limit: Int(clamping: options.maxFileSize)) else {
                throw .integrity("\(description)\(key), which the release needs, is missing")
            }
            let path = FileSystem.join(folder, key)
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
            try FileSystem.writeAtomically(bytes, to: path, durable: false)
            listing[key] = StoredObject(size: Int64(bytes.count), modified: FileSystem.now())
        }
        return listing
    }
}
