import Foundation
import Testing

/// A daemon's polls over https when the origin does not keep the connection between them
/// (nginx's keepalive shorter than the interval): each poll is a new connection that resumes
/// the TLS session of the last (CONTRACT, "Transport"; B7).
@Suite(.serialized) struct PollConnectionTests {
    @Test func aPollAfterTheOriginClosedTheConnectionResumesTheSession() throws {
        let origin = try TLSOrigin(keepalive: 1)
        let dir = try Scratch()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: origin.folder("site"), withIntermediateDirectories: true)
        try "<h1>v1</h1>".write(toFile: origin.folder("site") + "/index.html", atomically: true, encoding: .utf8)
        #expect(try Binary.run(["routes", origin.folder("site")]).status == 0)
        let daemon = try DaemonProcess(["--remote", origin.url(.good), "--cacert", origin.caFile, "--preset", dir.path("preset")],
                                       cache: dir.path("cache"))
        let http = try daemon.waitUntilServing()
        for _ in 0..<3 {
            // Past nginx's keepalive: the connection of the last poll is gone (seen, not assumed after a sleep).
            try waitUntil(timeout: 20) { try !origin.hasEstablishedConnections(.good) }
            let accepted = try http.request("POST", "/_cenarius/sync")
            let receipt = try waitForReceipt(http, try #require(try accepted.json()["id"] as? String))
            #expect(receipt["status"] as? String == "SUCCEED", "\(receipt)")
        }
        _ = daemon.terminate()
        let polls = origin.requests(endingWith: "Routes.head")
        #expect(polls.count == 4, "\(polls)")
        #expect(Set(polls.map(\.connection)).count == polls.count, "\(polls)")
        #expect(polls.dropFirst().allSatisfy { $0.reused && $0.status == 304 }, "\(polls)")
    }
}
