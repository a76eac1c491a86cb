import RouteSync

/// The answer to a lookup, as `resolve --json` prints it.
package struct Resolution: Sendable, Codable, Equatable {
    package enum Source: String, Sendable, Codable, CaseIterable {
        case cache, preset, remote, develop
    }

    package var uri: String
    package var path: String
    package var source: Source
    package var hash: String?
    package var stale: Bool
    /// Why a stale copy was served; printed on stderr, not part of the JSON.
    package var warning: String?

    enum CodingKeys: String, CodingKey { case uri, path, source, hash, stale }

    package init(uri: String, path: String, source: Source, hash: String?, stale: Bool, warning: String? = nil) {
        self.uri = uri
        self.path = path
        self.source = source
        self.hash = hash
        self.stale = stale
        self.warning = warning
    }

    /// The `--json` line, keys sorted, written without an encoder: this runs on every `resolve`.
    package func jsonText() -> String {
        var out: [UInt8] = []
        out.append(contentsOf: "{\"hash\":".utf8)
        if let hash { JSONText.appendString(hash, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: ",\"path\":".utf8)
        JSONText.appendString(path, to: &out)
        out.append(contentsOf: ",\"source\":\"\(source.rawValue)\",\"stale\":\(stale),\"uri\":".utf8)
        JSONText.appendString(uri, to: &out)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uri, forKey: .uri)
        try container.encode(path, forKey: .path)
        try container.encode(source, forKey: .source)
        // `hash` is always present in the output, null in develop mode.
        try container.encode(hash, forKey: .hash)
        try container.encode(stale, forKey: .stale)
    }
}
