import FoundationEssentials
import RouteSync

/// What a committed generation records besides its table.
public struct GenerationMeta: Codable, Sendable, Equatable {
    public var number: Int
    public var remote: String
    public var validators: Validators
    /// Seconds since 1970.
    public var committedAt: Double
    /// Entries held in this generation's `files/` (the rest are served from the preset).
    public var cachedFiles: Int
    public var cachedBytes: Int64
    /// Signed-table version (G8) when the table came with a verified signature.
    public var signedVersion: Int64?
    /// Entries of the table, so that a 304 can report them without parsing it (nil in caches written before).
    public var entries: Int?

    public init(number: Int, remote: String, validators: Validators, committedAt: Double, cachedFiles: Int, cachedBytes: Int64,
                signedVersion: Int64? = nil, entries: Int? = nil) {
        self.entries = entries
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
public struct Generation: Sendable {
    public let number: Int
    public let path: String

    public var tablePath: String { path + "/Routes.json" }
    public var metaPath: String { path + "/meta.json" }
    public var filesPath: String { path + "/files" }

    public func filePath(_ uri: URIPath) -> String { filesPath + "/" + uri.value }

    public func table() throws(CenariusError) -> RouteTable {
        do {
            return try RouteTable.parse(FileSystem.readFile(tablePath), source: tablePath)
        } catch {
            // A committed table that no longer parses means the cache was damaged under us.
            throw .storage("corrupt cache: generation \(number) table: \(error.message)")
        }
    }

    public func meta() throws(CenariusError) -> GenerationMeta {
        let json: JSONValue
        do { json = try JSONValue.parse(FileSystem.readFile(metaPath), source: metaPath) } catch {
            throw .storage("corrupt cache: \(error.message)")
        }
        guard let number = json["number"]?.int64, let remote = json["remote"]?.string, let committedAt = json["committedAt"]?.double else {
            throw .storage("corrupt cache: \(metaPath) lacks number, remote or committedAt")
        }
        return GenerationMeta(
            number: Int(number), remote: remote,
            validators: Validators(etag: json["validators"]?["etag"]?.string, lastModified: json["validators"]?["lastModified"]?.string),
            committedAt: committedAt, cachedFiles: Int(json["cachedFiles"]?.int64 ?? 0), cachedBytes: json["cachedBytes"]?.int64 ?? 0,
            signedVersion: json["signedVersion"]?.int64, entries: json["entries"]?.int64.map { Int($0) })
    }
}

extension GenerationMeta {
    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array((try? encoder.encode(self)) ?? Data("{}".utf8))
    }
}
