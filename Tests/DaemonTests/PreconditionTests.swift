@testable import Daemon
import NIOHTTP1
import Testing

/// RFC 9110 §13.2.2 order, as a table: each header alone and in the combinations the order
/// decides, for GET and HEAD, strong and weak validators.
@Suite struct PreconditionTests {
    let etag = "\"0cc175b9c0f1b6a831c399e269772661\""
    let gzipETag = "W/\"0cc175b9c0f1b6a831c399e269772661-gzip\""
    let modified = 1_795_400_000
    let before = "Fri, 20 Nov 2026 10:00:00 GMT"  // earlier than `modified`
    var at: String { HTTPDateLine.format(modified) }

    func outcome(_ headers: [(String, String)], _ method: HTTPMethod = .GET, etag: String? = nil) -> Preconditions.Outcome {
        Preconditions.evaluate(HTTPHeaders(headers), method: method, etag: etag ?? self.etag, lastModified: modified)
    }

    @Test func eachHeaderAlone() {
        #expect(outcome([]) == .proceed(rangeAllowed: false))
        #expect(outcome([("If-Match", etag)]) == .proceed(rangeAllowed: false))
        #expect(outcome([("If-Match", "\"other\"")]) == .failed)
        #expect(outcome([("If-Match", "W/" + etag)]) == .failed, "If-Match compares strongly")
        #expect(outcome([("If-Unmodified-Since", before)]) == .failed)
        #expect(outcome([("If-Unmodified-Since", at)]) == .proceed(rangeAllowed: false))
        #expect(outcome([("If-None-Match", etag)]) == .notModified)
        #expect(outcome([("If-None-Match", "W/" + etag)]) == .notModified, "If-None-Match compares weakly")
        #expect(outcome([("If-None-Match", "\"other\"")]) == .proceed(rangeAllowed: false))
        #expect(outcome([("If-Modified-Since", at)]) == .notModified)
        #expect(outcome([("If-Modified-Since", before)]) == .proceed(rangeAllowed: false))
        #expect(outcome([("If-Modified-Since", "yesterday")]) == .proceed(rangeAllowed: false), "an invalid date is ignored")
        #expect(outcome([("Range", "bytes=0-9")]) == .proceed(rangeAllowed: true))
    }

    @Test func theOrderDecides() {
        // A matching If-None-Match answers 304 before Range is looked at (Chromium's media requests).
        #expect(outcome([("Range", "bytes=100-199"), ("If-None-Match", etag)]) == .notModified)
        #expect(outcome([("Range", "bytes=100-199"), ("If-None-Match", etag)], .HEAD) == .notModified)
        // If-Match failing wins over everything after it.
        #expect(outcome([("If-Match", "\"other\""), ("If-None-Match", etag)]) == .failed)
        // If-Unmodified-Since is ignored when If-Match is present.
        #expect(outcome([("If-Match", etag), ("If-Unmodified-Since", before)]) == .proceed(rangeAllowed: false))
        // If-Modified-Since is ignored when If-None-Match is present.
        #expect(outcome([("If-None-Match", "\"other\""), ("If-Modified-Since", at)]) == .proceed(rangeAllowed: false))
        // If-Range: a strong match honours Range, anything else sends the whole.
        #expect(outcome([("Range", "bytes=0-9"), ("If-Range", etag)]) == .proceed(rangeAllowed: true))
        #expect(outcome([("Range", "bytes=0-9"), ("If-Range", "\"other\"")]) == .proceed(rangeAllowed: false))
        #expect(outcome([("Range", "bytes=0-9"), ("If-Range", "W/" + etag)]) == .proceed(rangeAllowed: false))
        #expect(outcome([("Range", "bytes=0-9"), ("If-Range", at)]) == .proceed(rangeAllowed: true))
        #expect(outcome([("Range", "bytes=0-9"), ("If-Range", before)]) == .proceed(rangeAllowed: false))
        // HEAD never takes a Range.
        #expect(outcome([("Range", "bytes=0-9")], .HEAD) == .proceed(rangeAllowed: false))
        // A write that matches If-None-Match fails instead of 304.
        #expect(outcome([("If-None-Match", "*")], .POST) == .failed)
    }

    @Test func eachRepresentationHasItsOwnValidator() {
        #expect(outcome([("If-None-Match", gzipETag)], etag: gzipETag) == .notModified)
        #expect(outcome([("If-None-Match", gzipETag)]) == .proceed(rangeAllowed: false), "the gzip tag does not validate identity")
        #expect(outcome([("If-None-Match", etag)], etag: gzipETag) == .proceed(rangeAllowed: false))
    }

    @Test func datesParseOnlyAsIMFFixdate() {
        #expect(Preconditions.parseDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(Preconditions.parseDate(HTTPDateLine.format(modified)) == modified)
        #expect(Preconditions.parseDate("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(Preconditions.parseDate("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
    }
}
