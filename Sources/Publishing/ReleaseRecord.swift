package import RouteSync

/// What a channel published, kept in the store (`_cenarius/r/<channel>/<version>.json`, written
/// once, before the head that makes it current): the head's exact text, when, and how it came
/// about. `releases` lists them, `rollback` goes back to one, `promote` copies one to another
/// channel and `prune` keeps what the newest of them name.
package struct ReleaseRecord: Sendable, Equatable {
    package static let format = "cenarius-release-1"
    package static let folder = ReleaseIndex.folder + "/r/"

    package var head: ReleaseHead
    /// The head's exact bytes (what devices verified).
    package var headBytes: [UInt8]
    /// Unix seconds.
    package var published: Double
    /// `publish`, `promote from beta 1795…`, `rollback to 1795…`, `halt`, `resume`.
    package var origin: String
    package var files: Int
    package var bytes: Int64

    package init(head: [UInt8], published: Double, origin: String, files: Int, bytes: Int64) throws(CenariusError) {
        self.head = try ReleaseHead.parse(head, source: "release record")
        self.headBytes = head
        self.published = published
        self.origin = origin
        self.files = files
        self.bytes = bytes
    }

    package var key: String { Self.key(channel: head.channel, version: head.version) }

    package static func key(channel: String, version: Int64) -> String { "\(folder)\(channel)/\(version).json" }

    /// `(channel, version)` of a record's key, nil for any other key.
    package static func parseKey(_ key: String) -> (channel: String, version: Int64)? {
        guard key.hasPrefix(folder), key.hasSuffix(".json") else { return nil }
        let parts = key.dropFirst(folder.count).dropLast(5).split(separator: "/")
        guard parts.count == 2, ReleaseHead.isChannel(String(parts[0])), let version = Int64(parts[1]) else { return nil }
        return (String(parts[0]), version)
    }

    package func serialized() -> [UInt8] {
        let parts = ["\"format\": \"\(Self.format)\"", "\"published\": \(Int64(published))", "\"origin\": \(JSONText.quoted(origin))",
                     "\"files\": \(files)", "\"bytes\": \(bytes)", "\"head\": \(JSONText.quoted(String(decoding: headBytes, as: UTF8.self)))"]
        return Array(("{" + parts.joined(separator: ", ") + "}\n").utf8)
    }

    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> ReleaseRecord {
        let json = try JSONValue.parse(bytes, source: source)
        guard json["format"]?.string == format, let head = json["head"]?.string else { throw .integrity("\(source): not a \(format) release record") }
        return try ReleaseRecord(head: Array(head.utf8), published: json["published"]?.double ?? 0, origin: json["origin"]?.string ?? "",
                                 files: Int(json["files"]?.int64 ?? 0), bytes: json["bytes"]?.int64 ?? 0)
    }
}
