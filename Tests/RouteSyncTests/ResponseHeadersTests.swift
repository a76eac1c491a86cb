import Testing
@testable import RouteSync
@testable import Transport

@Suite struct ResponseHeadersTests {
    func parse(_ lines: [String]) -> ResponseHeaders {
        var headers = ResponseHeaders()
        for line in lines {
            Array(line.utf8).withUnsafeBytes { headers.consume($0) }
        }
        return headers
    }

    @Test func readsTheFieldsItActsOnInAnyCaseAndSpacing() {
        let headers = parse([
            "HTTP/1.1 206 Partial Content\r\n", "eTaG:   \"abc\"\t\r\n", "CONTENT-LENGTH: 1234\r\n",
            "Last-Modified: Wed, 21 Oct 2015 07:28:00 GMT\r\n", "Accept-Ranges: Bytes\r\n", "X-Etag: nope\r\n", "\r\n",
        ])
        #expect(headers.status == 206)
        #expect(headers.statusLine == "HTTP/1.1 206 Partial Content")
        #expect(headers.etag == "\"abc\"")
        #expect(headers.contentLength == 1234)
        #expect(headers.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(headers.acceptRanges)
    }

    /// What a cache on the way says of its copy, kept as `why`'s evidence: until when it may serve
    /// it unchanged is its `s-maxage` (else `max-age`) less its `Age`, from when it came.
    @Test func aCachesAgeAndLifetimeSayHowStaleItsCopyMayBe() {
        let headers = parse(["HTTP/1.1 200 OK\r\n", "age: 40\r\n", "Cache-Control: public, max-age=300, s-maxage=120\r\n",
                             "Date: Thu, 26 Nov 2026 06:00:00 GMT\r\n"])
        #expect(headers.age == "40" && headers.cacheControl == "public, max-age=300, s-maxage=120" && headers.date == "Thu, 26 Nov 2026 06:00:00 GMT")
        let polled = PolledResponse(url: "https://user:secret@cdn.example/Routes.head", headers: headers, at: 1000)
        #expect(polled.staleUntil == 1080, "s-maxage 120 less an age of 40")
        #expect(!polled.url.contains("secret"), "no credentials in the cache (G11)")
        #expect(PolledResponse(url: "u", headers: parse(["HTTP/1.1 200 OK\r\n", "Age: 9\r\n"]), at: 0).staleUntil == nil, "no lifetime: it does not say")
        #expect(HeaderValue.age("-1") == nil && HeaderValue.age("12345678901") == nil && HeaderValue.sharedMaxAge("max-age=\"60\"") == 60)
    }

    @Test func aNewStatusLineForgetsThePreviousResponse() {
        let headers = parse(["HTTP/1.1 301 Moved\r\n", "ETag: \"old\"\r\n", "HTTP/2 200\r\n", "content-length: 5\r\n"])
        #expect(headers.status == 200)
        #expect(headers.etag == nil)
        #expect(headers.contentLength == 5)
    }

    @Test func malformedLinesAreIgnoredNotGuessed() {
        #expect(parse(["HTTP/1.1 2x0 Odd\r\n"]).status == 0)
        #expect(parse(["HTTP/1.1\r\n"]).status == 0)
        #expect(parse(["HTTP/1.1 99999999999999999999 Big\r\n"]).status == 0)
        let headers = parse(["HTTP/1.1 200 OK\r\n", "Content-Length 12\r\n", "Content-Lengthy: 3\r\n", "Content-Length: twelve\r\n", "\r-tag: x\r\n"])
        #expect(headers.contentLength == nil)
        #expect(headers.etag == nil)
    }
}
