import Foundation
import Testing
@testable import ResourceCache
import RouteSync

@Suite struct WriterLockTests {
    @Test func secondWriterTimesOutWithStorageErrorNamingTheHolder() throws {
        let path = NSTemporaryDirectory() + "cenarius-lock-" + UUID().uuidString
        defer { unlink(path) }
        let first = try WriterLock(path: path, timeout: 1, purpose: "test")
        do {
            _ = try WriterLock(path: path, timeout: 0.1, purpose: "sync")
            Issue.record("second lock acquired")
        } catch {
            #expect(error.code == .storage)
            #expect(error.message.contains("pid \(getpid())"))
        }
        withExtendedLifetime(first) {}
    }
}
