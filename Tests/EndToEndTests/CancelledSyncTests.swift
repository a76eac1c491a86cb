import Foundation
import Testing
import TestOrigin

/// A sync that SIGTERM stops half-way is recorded as cancelled: no `sync failed` with a remote
/// error in the log, no `sync-failed` event, no failure metric. Nothing is wrong with the remote.
@Suite(.awaitsCleanups) struct CancelledSyncTests {
    @Test func aSyncStoppedByShutdownIsCancelledNotARemoteError() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "v1"])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        let http = try daemon.waitUntilServing()

        origin.publish(["index.html": "v2", "big.js": String(repeating: "x", count: 4096)])
        origin.inject(.stall, on: "big.js")
        let accepted = try http.request("POST", "/_cenarius/sync")
        #expect(accepted.status == 202)
        try waitUntil(timeout: 20) { !origin.requests(for: "big.js").isEmpty }

        let stop = daemon.terminate()
        #expect(stop.status == 0)
        #expect(stop.seconds < 5)
        let log = daemon.stderr
        #expect(log.contains("sync cancelled"), "\(log)")
        #expect(!log.contains("sync failed"), "\(log)")
        #expect(!log.contains("REMOTE"), "\(log)")
    }
}
