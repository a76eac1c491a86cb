import Testing
@testable import ResourceCache
import TestOrigin

/// An unchanged poll is paid for by every device of a fleet many times a day (B7): its request
/// carries what the origin needs to answer 304 and nothing it would ignore.
@Suite(.awaitsCleanups) struct PollRequestTests {
    @Test func anUnchangedPollSendsTheETagAloneAndNoAccept() async throws {
        let f = try await Fixture.registered()
        try f.release(["a.txt": "a"])
        f.origin.resetRequests()
        #expect(try f.sync().outcome == .notModified)
        let poll = try #require(f.origin.gets.first)
        #expect(poll.headers["if-none-match"] != nil)
        // RFC 9110 13.1.3: beside If-None-Match, If-Modified-Since is ignored.
        #expect(poll.headers["if-modified-since"] == nil, "\(poll.headers)")
        #expect(poll.headers["accept"] == nil, "\(poll.headers)")
    }
}
