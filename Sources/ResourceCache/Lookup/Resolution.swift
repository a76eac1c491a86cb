import RouteSync

/// The answer to a lookup, as `resolve --json` prints it and `/_cenarius/resolve` answers it: one
/// writer (`jsonText`) for both.
package struct Resolution: Sendable, Equatable {
    package enum Source: String, Sendable, CaseIterable {
        case cache, preset, remote, develop
    }

    package var uri: String
    package var path: String
    package var source: Source
    package var hash: String?
    package var stale: Bool
    /// Why a stale copy was served; printed on stderr, not part of the JSON.
    package var warning: String?

    package init(uri: String, path: String, source: Source, hash: String?, stale: Bool, warning: String? = nil) {
        self.uri = uri
        self.path = path
        self.source = source
        self.hash = hash
        self.stale = stale
        self.warning = warning
    }

    /// The `--json` line, keys sorted (`hash` null in develop mode), written without an encoder:
    /// this runs on every `resolve`.
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
}
