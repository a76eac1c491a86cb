import RouteSync

/// How the daemon reads a request target before any lookup, in one place so that the
/// request-path fuzzer (Fuzz/FuzzRequestPath) exercises the decoder `serve` uses, not a copy.
/// The uri rules themselves (decoding, `..`, control characters) are `URIPath(lookup:)`'s.
package enum RequestTarget {
    /// The target's path, without the query.
    package static func path(of target: String) -> Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }

    /// A target in absolute-form (RFC 9112 §3.2.2: `http://host:port/path?query`, as proxies
    /// send): its authority and the origin-form rest; nil for any other form.
    package static func absoluteForm(_ target: String) -> (authority: String, originForm: String)? {
        let lower = target.prefix(8).lowercased()
        let scheme = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
        guard scheme > 0 else { return nil }
        let rest = target.dropFirst(scheme)
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<end]
        guard !authority.isEmpty else { return nil }
        let tail = rest[end...]
        return (String(authority), tail.hasPrefix("/") ? String(tail) : "/" + tail)
    }

    /// One query parameter, %-decoded.
    package static func query(_ target: String, _ name: String) -> String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts[0] == name { return parts.count > 1 ? URIPath.percentDecoded(parts[1]) : "" }
        }
        return nil
    }

    /// What a file request looks up, given its path without the leading `/`: a folder (`/`, or a
    /// path ending in `/`) answers its `index.html`.
    package static func fileName(_ raw: String) -> String {
        raw.isEmpty || raw.hasSuffix("/") ? raw + "index.html" : raw
    }
}
