import NIOHTTP1
import Testing
@testable import Daemon
import RouteSync

/// The control API's guard against other origins' pages (G9, G10), as pure decisions.
@Suite struct WriteGuardTests {
    let guardian = WriteGuard(allowed: ["https://admin.example"], bind: "127.0.0.1")

    func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

    @Test func scriptsAndTheDaemonsOwnPagesPassAndOtherPagesAreRefused() {
        #expect(guardian.check(headers([])) == .sameOrigin)
        #expect(guardian.check(headers([("Host", "127.0.0.1:8700"), ("Origin", "http://127.0.0.1:8700")])) == .sameOrigin)
        #expect(guardian.check(headers([("Host", "localhost:8700"), ("Origin", "http://localhost:8700")])) == .sameOrigin)
        #expect(guardian.check(headers([("Origin", "https://admin.example")])) == .allowedOrigin("https://admin.example"))
        guard case .refused = guardian.check(headers([("Host", "127.0.0.1:8700"), ("Origin", "http://evil.example")])) else {
            Issue.record("another origin's page was let through")
            return
        }
        // A no-cors write names no Origin a script could not, but the browser marks it.
        guard case .refused = guardian.check(headers([("Sec-Fetch-Site", "cross-site")])) else {
            Issue.record("a cross-site page was let through")
            return
        }
        // DNS rebinding: the page's own name as Host, with a matching Origin.
        guard case .refused = guardian.check(headers([("Host", "evil.example:8700"), ("Origin", "http://evil.example:8700")])) else {
            Issue.record("a rebinding page was let through")
            return
        }
    }

    @Test func readsAreAnsweredOnlyForOwnAndAllowedHosts() {
        #expect(guardian.hostAllowed(headers([])))
        #expect(guardian.hostAllowed(headers([("Host", "127.0.0.1:8700")])))
        #expect(guardian.hostAllowed(headers([("Host", "[::1]:8700")])))
        #expect(guardian.hostAllowed(headers([("Host", "admin.example")])))
        #expect(!guardian.hostAllowed(headers([("Host", "evil.example:8700")])))
        #expect(WriteGuard.hostName("[::1]:8700") == "::1" && WriteGuard.hostName("Example.COM:80") == "example.com")
    }

    @Test func corsHeadersAndPreflightOnlyForAllowedOrigins() {
        #expect(WriteGuard.corsHeaders(.sameOrigin).isEmpty)
        #expect(WriteGuard.corsHeaders(.allowedOrigin("https://admin.example")).first?.1 == "https://admin.example")
        let allowed = guardian.preflight(headers([("Origin", "https://admin.example")]))
        #expect(allowed.status == .noContent && allowed.headers.contains { $0.0 == "Access-Control-Allow-Methods" })
        let other = guardian.preflight(headers([("Origin", "http://evil.example")]))
        #expect(!other.headers.contains { $0.0.hasPrefix("Access-Control") })
    }
}

/// An error is answered with the status it carries, else its code's (no endpoint patches one).
@Suite struct EnvelopeStatusTests {
    @Test func theErrorCarriesItsStatus() {
        #expect(Envelope.status(for: CenariusError.notFound("x")) == .notFound)
        #expect(Envelope.status(for: CenariusError.remote("x")) == .badGateway)
        #expect(Envelope.status(for: CenariusError.integrity("x")) == .badGateway)
        #expect(Envelope.status(for: CenariusError.storage("x")) == .internalServerError)
        #expect(Envelope.status(for: CenariusError.usage("x")) == .badRequest)
        #expect(Envelope.status(for: CenariusError.notFound("too late").answering(409)) == .conflict)
        #expect(Envelope.status(for: CenariusError.usage("no token").answering(401)) == .unauthorized)
    }
}
