import Testing
@testable import RouteSync
@testable import Transport

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
        // 1024 bytes in segments a file system can name (each at most 255 bytes).
        let segment = String(repeating: "a", count: 255)
        #expect(throws: Never.self) { try URIPath(validating: [segment, segment, segment, String(segment.dropFirst())].joined(separator: "/") + "/a") }
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

@Suite struct URIPathPropertyTests {
    /// Random strings over the characters that matter for escapes: whatever is accepted, as a
    /// table uri or as a lookup, joined to a root never climbs out of it.
    @Test func nothingAcceptedEscapesItsRoot() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = [".", "..", "/", "%", "2", "e", "E", "f", "F", "5", "c", "C", "a", "\\", "?", "#", "%2e", "%2f", "%5c", "%00", "é", " "]
        var accepted = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 1...12, using: &generator)
            let raw = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            for uri in [try? URIPath(lookup: raw), try? URIPath(validating: raw)].compactMap({ $0 }) {
                accepted += 1
                var depth = 0
                for segment in uri.value.split(separator: "/", omittingEmptySubsequences: false) {
                    #expect(segment != "" && segment != "." && segment != "..", "\(raw) → \(uri.value)")
                    depth += 1
                }
                #expect(depth > 0 && !uri.value.hasPrefix("/") && !uri.value.contains("\\") && !uri.value.utf8.contains(0))
            }
        }
        #expect(accepted > 100)
    }

    /// A `file://` remote's path goes through the same strict decoder: `%` needs two hex digits.
    @Test func aFileRemotesPathIsDecodedStrictly() {
        #expect(LocalFile.localPath("file:///srv/a%20b/x.js") == "/srv/a b/x.js")
        #expect(LocalFile.localPath("file:///srv/a%+1b") == "/srv/a%+1b")
        #expect(LocalFile.localPath("file://host/srv/x?y#z") == "/srv/x")
        #expect(LocalFile.localPath("file:///srv/%") == "/srv/%")
    }
}
