import Testing
@testable import RouteSync
@testable import Transport

/// A daemon keeps its poll's connection only when the next poll may still use it (B7).
@Suite struct KeptConnectionsTests {
    @Test func pollsCloserThanLibcurlsReuseLimitKeepTheirConnection() {
        #expect(KeptConnections.worthKeeping(afterGap: nil), "the first poll cannot know: it keeps")
        #expect(KeptConnections.worthKeeping(afterGap: 30))
        #expect(KeptConnections.worthKeeping(afterGap: Double(KeptConnections.maxIdle)))
        // The default interval (300 s): libcurl would not reuse it, the origin has closed it long before.
        #expect(!KeptConnections.worthKeeping(afterGap: 300))
        #expect(!KeptConnections.worthKeeping(afterGap: Double(KeptConnections.maxIdle) + 1))
    }
}
