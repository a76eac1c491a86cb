import NIOHTTP1
import RouteSync

/// How the daemon reads a request target before any lookup, in one place so that the
/// request-path fuzzer (Fuzz/FuzzRequestPath) exercises the decoder `serve` uses, not a copy.
/// The uri rules themselves (decoding, `..`, control characters) are `URIPath(lookup:)`'s.
package enum RequestTarget {
    /// An absolute-form target (`GET http://host:port/path HTTP/1.1`, RFC 9112 §3.2.2), which a
    /// server must accept, made origin-form (`/path`); its authority replaces `Host`, as the RFC
    /// says, so the Host checks see the host the request names. Other targets are left as they are.
    static func makeOriginForm(_ head: inout HTTPRequestHead) {
        let target = head.uri
        guard target.utf8.first != UInt8(ascii: "/"), let separator = target.firstRange(of: "://") else { return }
        let scheme = target[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return }
        let rest = target[separator.upperBound...]
        let pathStart = rest.firstIndex { (c: Character) in c == "/" || c == "?" || c == "#" } ?? rest.endIndex
        var authority = rest[..<pathStart]
        // A userinfo has no place in an http(s) target (RFC 9110 §4.2.4); the host follows it.
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let path = rest[pathStart...]
        head.uri = path.first == "/" ? String(path) : "/" + path
        head.headers.replaceOrAdd(name: "Host", value: String(authority))
    }

    /// The target's path, without the query.
    package static func path(of target: String) -> Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
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
