import Testing
@testable import RouteSync

@Suite struct URIPathTests {
    @Test(arguments: ["index.html", "js/app.js", "a/b/c/d.css", "é/ü.png", "...", "a/.hidden", "a/..b", "x y.html"])
    func acceptsValid(_ raw: String) throws {
        #expect(try URIPath(validating: raw).value == raw)
    }

    @Test(arguments: ["", "/abs", "a//b", "a/", ".", "..", "a/../b", "a/./b", "../etc/passwd", "a\\b", "a\u{0}b", "a\nb", "a\u{7F}"])
    func rejectsInvalid(_ raw: String) {
        #expect(throws: CenariusError.self) { try URIPath(validating: raw) }
        do { _ = try URIPath(validating: raw) } catch { #expect(error.code == .integrity) }
    }

    @Test func rejectsOverlong() {
        #expect(throws: CenariusError.self) { try URIPath(validating: String(repeating: "a", count: 1025)) }
        #expect(throws: Never.self) { try URIPath(validating: String(repeating: "a", count: 1024)) }
    }

    @Test func lookupDropsQueryAndFragmentAndDecodesOnce() throws {
        #expect(try URIPath(lookup: "index.html?v=3#top").value == "index.html")
        #expect(try URIPath(lookup: "img/a%20b.png").value == "img/a b.png")
        // Decoded once: %252e stays a literal "%2e" segment name, which is a valid file name.
        #expect(try URIPath(lookup: "a/%252e%252e/b").value == "a/%2e%2e/b")
    }

    @Test(arguments: ["%2e%2e/etc/passwd", "a/%2E%2E/b", "%2Fetc", "a%00b", "a%5cb", "a/%2e/b", "%zz", "a%2"])
    func lookupRejectsEscapes(_ raw: String) {
        do {
            _ = try URIPath(lookup: raw)
            Issue.record("\(raw) was accepted")
        } catch {
            #expect(error.code == .notFound)
        }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: CenariusError.self) { try URIPath(lookup: "a%ffb") }
    }
}
