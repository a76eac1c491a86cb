import FoundationEssentials
package import RouteSync
package import Transport

/// What a committed generation records besides its table.
package struct GenerationMeta: Sendable, Equatable {
    package var number: Int
    package var remote: String
    package var validators: Validators
    /// Seconds since 1970.
    package var committedAt: Double
    /// Entries held in this generation's `files/` (the rest are served from the preset).
    package var cachedFiles: Int
    package var cachedBytes: Int64
    /// Signed-table version (G8) when the table came with a verified signature.
    package var signedVersion: Int64?
    /// When its signature was made and when it expires (unix seconds), if it said so.
    package var signedAt: Int64?
    package var signatureExpires: Int64?
    /// Entries of the table, so that a 304 can report them without parsing it (nil in caches written before).
    package var entries: Int?
    /// The name the fleet knows the release by: its manifest's, else a short hash of the table (nil in caches written before).
    package var release: String?
    /// SHA-256 of the table's exact bytes, which a head names it by: a poll compares it without
    /// reading and hashing a table of megabytes (nil in caches written before).
    package var tableSHA256: String?
    /// The version of the head the release came from, when it came from one (nil in caches written before).
    package var headVersion: Int64?
    /// The files' bytes this release took from LAN peers and from the origin, when peers gave
    /// any (docs/peers.md): what the poll's report says of the release in force.
    package var bytesFromPeers: Int64?
    package var bytesFromOrigin: Int64?

    package init(number: Int, remote: String, validators: Validators, committedAt: Double, cachedFiles: Int, cachedBytes: Int64,
                signedVersion: Int64? = nil, entries: Int? = nil, release: String? = nil, signedAt: Int64? = nil, signatureExpires: Int64? = nil,
                tableSHA256: String? = nil, headVersion: Int64? = nil) {
        self.tableSHA256 = tableSHA256
        self.headVersion = headVersion
        self.signedAt = signedAt
        self.signatureExpires = signatureExpires
        self.entries = entries
        self.release = release
        self.number = number
        self.remote = remote
        self.validators = validators
        self.committedAt = committedAt
        self.cachedFiles = cachedFiles
        self.cachedBytes = cachedBytes
        self.signedVersion = signedVersion
    }
}

/// A committed, immutable generation: a table and the cached files it needs.
package struct Generation: Sendable {
    package let number: Int
    package let path: String

    package var tablePath: String { path + "/Routes.json" }
    package var metaPath: String { path + "/meta.json" }
    package var filesPath: String { path + "/files" }

    package func filePath(_ uri: URIPath) -> String { filesPath + "/" + uri.value }

    package func table() throws(CenariusError) -> RouteTable {
        do {
            return try RouteTable.parse(FileSystem.readFile(tablePath), source: tablePath)
        } catch {
            // A committed table that no longer parses means the cache was damaged under us.
            throw .storage("corrupt cache: generation \(number) table: \(error.message)")
        }
    }

    package func meta() throws(CenariusError) -> GenerationMeta {
        let json: JSONValue
        do { json = try JSONValue.parse(FileSystem.readFile(metaPath), source: metaPath) } catch {
            throw .storage("corrupt cache: \(error.message)")
        }
        guard let number = json["number"]?.int64, let remote = json["remote"]?.string, let committedAt = json["committedAt"]?.double else {
            throw .storage("corrupt cache: \(metaPath) lacks number, remote or committedAt")
        }
        var meta = GenerationMeta(
            number: Int(number), remote: remote,
            validators: Validators(etag: json["validators"]?["etag"]?.string, lastModified: json["validators"]?["lastModified"]?.string),
            committedAt: committedAt, cachedFiles: Int(json["cachedFiles"]?.int64 ?? 0), cachedBytes: json["cachedBytes"]?.int64 ?? 0,
            signedVersion: json["signedVersion"]?.int64, entries: json["entries"]?.int64.map { Int($0) }, release: json["release"]?.string,
            signedAt: json["signedAt"]?.int64, signatureExpires: json["signatureExpires"]?.int64,
            tableSHA256: json["tableSHA256"]?.string.flatMap { ReleaseIndex.isTableDigest($0) ? $0 : nil }, headVersion: json["headVersion"]?.int64)
        meta.bytesFromPeers = json["bytesFromPeers"]?.int64.flatMap { $0 >= 0 ? $0 : nil }
        meta.bytesFromOrigin = json["bytesFromOrigin"]?.int64.flatMap { $0 >= 0 ? $0 : nil }
        return meta
    }
}

extension GenerationMeta {
    /// `meta.json`, written by hand as `Generation.meta()` reads it by hand (one codec: the
    /// lookup path reads it without Foundation's decoder); keys sorted, absent values left out.
    /// Caches written by the JSON encoder before read the same.
    func encoded() -> [UInt8] {
        var fields: [(String, String)] = [
            ("cachedBytes", String(cachedBytes)), ("cachedFiles", String(cachedFiles)),
            ("committedAt", committedAt.isFinite ? "\(committedAt)" : "0"), ("number", String(number)), ("remote", JSONText.quoted(remote)),
        ]
        var validators: [String] = []
        if let etag = self.validators.etag { validators.append("\"etag\": \(JSONText.quoted(etag))") }
        if let lastModified = self.validators.lastModified { validators.append("\"lastModified\": \(JSONText.quoted(lastModified))") }
        fields.append(("validators", "{" + validators.joined(separator: ", ") + "}"))
        if let bytesFromOrigin { fields.append(("bytesFromOrigin", String(bytesFromOrigin))) }
        if let bytesFromPeers { fields.append(("bytesFromPeers", String(bytesFromPeers))) }
        if let entries { fields.append(("entries", String(entries))) }
        if let headVersion { fields.append(("headVersion", String(headVersion))) }
        if let release { fields.append(("release", JSONText.quoted(release))) }
        if let signatureExpires { fields.append(("signatureExpires", String(signatureExpires))) }
        if let signedAt { fields.append(("signedAt", String(signedAt))) }
        if let signedVersion { fields.append(("signedVersion", String(signedVersion))) }
        if let tableSHA256 { fields.append(("tableSHA256", JSONText.quoted(tableSHA256))) }
        let body = fields.sorted { $0.0 < $1.0 }.map { "  \"\($0.0)\": \($0.1)" }.joined(separator: ",\n")
        return Array("{\n\(body)\n}\n".utf8)
    }
}
