import NIOHTTP1
import RouteSync

/// Keeps web pages of other origins from driving the control API. Browsers send `Origin` (and
/// `Sec-Fetch-Site`) with every POST and DELETE, `no-cors` ones included, while curl and scripts
/// send neither: so a write that names another origin, or that a browser marks `cross-site`,
/// changes nothing (403), and everything else works as before. Without this, any page the
/// kiosk's browser opened could confirm a bad release or hold updates forever.
///
/// The daemon's own origin is `http://` + the request's `Host` when that host is the loopback
/// address or name the daemon answers on: a page served by the daemon itself. A page on a
/// rebinding domain (`evil.example:8700` resolving to 127.0.0.1) sends its own name as `Host`,
/// which is not loopback, so it is refused too.
struct WriteGuard: Sendable {
    /// `--allow-origin`: origins (scheme://host[:port]) whose pages may use the control API.
    let allowed: Set<String>
    /// The address the daemon binds, also accepted as its own host name.
    let bind: String

    enum Verdict: Equatable {
        /// No browser context (curl, scripts) or the daemon's own pages.
        case sameOrigin
        /// A page of an origin named by `--allow-origin`: answered with CORS headers for it.
        case allowedOrigin(String)
        case refused(String)
    }

    func check(_ headers: HTTPHeaders) -> Verdict {
        let origin = headers.first(name: "origin")
        if headers.first(name: "sec-fetch-site")?.lowercased() == "cross-site", origin.map({ !allowed.contains($0) }) ?? true {
            return .refused("a cross-site page may not use the control API")
        }
        guard let origin else { return .sameOrigin }
        if allowed.contains(origin) { return .allowedOrigin(origin) }
        if let host = headers.first(name: "host"), isOwnHost(host), origin.lowercased() == "http://" + host.lowercased() {
            return .sameOrigin
        }
        return .refused("pages of \(origin) may not use the control API (serve --allow-origin names the origins that may)")
    }

    /// Reads too (every `/_cenarius/` and `/health` path): a page on a rebinding domain sends its
    /// own name as `Host` and no `Origin` with a same-origin GET, and would otherwise read the
    /// release state and local paths. Only the daemon's own loopback names and addresses, and the
    /// hosts `--allow-origin` names, are answered; a request without `Host` (HTTP/1.0) is no page.
    func hostAllowed(_ headers: HTTPHeaders) -> Bool {
        guard let host = headers.first(name: "host") else { return true }
        if isOwnHost(host) { return true }
        let name = Self.hostName(host)
        return allowed.contains { origin in
            guard let authority = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first else { return false }
            return Self.hostName(String(authority)) == name
        }
    }

    /// A `Host` value's name, lowercased, without port or IPv6 brackets.
    static func hostName(_ host: String) -> String {
        if host.hasPrefix("[") { return host.dropFirst().prefix { $0 != "]" }.lowercased() }
        return host.prefix { $0 != ":" }.lowercased()
    }

    func isOwnHost(_ host: String) -> Bool {
        let lower = Self.hostName(host)
        return lower == "localhost" || lower == "::1" || lower.hasPrefix("127.") || lower == bind.lowercased()
    }

    /// Headers for a reply to an allowed origin's page.
    static func corsHeaders(_ verdict: Verdict) -> [(String, String)] {
        guard case .allowedOrigin(let origin) = verdict else { return [] }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }

    /// The answer to a preflight (`OPTIONS`): CORS only for origins `--allow-origin` names.
    func preflight(_ headers: HTTPHeaders) -> Reply {
        var reply = Reply(status: .noContent, headers: [("Allow", "GET, HEAD, POST, DELETE, OPTIONS")])
        if let origin = headers.first(name: "origin"), allowed.contains(origin) {
            reply.headers += [
                ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                ("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE"),
                ("Access-Control-Allow-Headers", "Content-Type, Authorization, Last-Event-ID"),
                ("Access-Control-Max-Age", "600"),
            ]
        }
        return reply
    }
}
