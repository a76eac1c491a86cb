import Foundation
import Testing
import TestOrigin

/// The daemon's HTTP/1.1 connection handling, byte for byte: pipelined requests answered in
/// order whatever path each takes, keep-alive rules, big files by sendfile, and bad requests.
@Suite(.awaitsCleanups) struct HTTPConnectionTests {
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let page = String(repeating: "<p>pipelined</p>\n", count: 50)
        // Over the 1 MiB kept in memory: sent from the file.
        let big = (0..<(1_600_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        origin.publish(["index.html": Array(page.utf8), "big.bin": big])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        #expect(try http.get("/index.html").text == page)

        // One write, six requests: prepared (event loop), control API and a miss (off the
        // loop), HEAD, Range, a file by sendfile; the last asks to close.
        let requests = [
            ("GET", "/_cenarius/status", ""), ("GET", "/index.html", ""), ("GET", "/missing.css", ""),
            ("HEAD", "/index.html", ""), ("GET", "/index.html", "Range: bytes=3-7\r\n"), ("GET", "/big.bin", "Connection: close\r\n"),
        ]
        let wire = requests.map { "\($0.0) \($0.1) HTTP/1.1\r\nHost: 127.0.0.1\r\n\($0.2)\r\n" }.joined()
        let responses = try RawHTTP.parse(try http.exchange(Array(wire.utf8)), methods: requests.map(\.0))
        #expect(responses.map(\.status) == [200, 200, 404, 200, 206, 200])
        #expect(try responses[0].json()["daemon"] != nil)
        #expect(responses[1].text == page)
        #expect(try responses[2].json()["desc"] as? String == "NOT_FOUND")
        #expect(responses[3].body.isEmpty && responses[3].headers["content-length"] == String(page.utf8.count))
        #expect(responses[4].text == String(page.dropFirst(3).prefix(5)))
        #expect(responses[5].body == big)
        #expect(responses[5].headers["etag"] == "\"\(TestOrigin.md5(big))\"")
        #expect(responses.allSatisfy { $0.headers["date"]?.hasSuffix(" GMT") == true })
        #expect(responses[5].headers["connection"] == "close")

        // A Range in the middle of the big file comes from the file too.
        let slice = try http.get("/big.bin", headers: ["Range": "bytes=1000000-1000099"])
        #expect(slice.status == 206 && slice.body == Array(big[1_000_000..<1_000_100]))
    }

    @Test func keepAliveFollowsTheProtocolVersion() throws {
        try withDevelopDaemon { http in
            // HTTP/1.0 closes after one reply unless asked to keep the connection.
            let plain = try RawHTTP.parse(try http.exchange(Array("GET /a.txt HTTP/1.0\r\n\r\nGET /a.txt HTTP/1.0\r\n\r\n".utf8)))
            #expect(plain.count == 1 && plain[0].text == "A" && plain[0].headers["connection"] == "close")
            let kept = try RawHTTP.parse(try http.exchange(Array(
                "GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /a.txt HTTP/1.0\r\n\r\n".utf8)))
            #expect(kept.count == 2 && kept[0].headers["connection"] == "keep-alive")
        }
    }

    @Test func badRequestsAreRefusedAndTheConnectionClosed() throws {
        try withDevelopDaemon { http in
            let garbage = try RawHTTP.parse(try http.exchange(Array("NOT HTTP AT ALL\r\n\r\nGET /a.txt HTTP/1.1\r\n\r\n".utf8)))
            #expect(garbage.count == 1 && garbage[0].status == 400)

            let body = String(repeating: "x", count: 100_000)
            let large = try RawHTTP.parse(try http.exchange(Array(
                "POST /_cenarius/sync HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)))
            #expect(large.count == 1 && large[0].status == 413)

            // The server is still there for the next client.
            #expect(try http.get("/a.txt").text == "A")
        }
    }

    /// A develop-mode daemon serving `a.txt` ("A").
    private func withDevelopDaemon(_ body: (RawHTTP) throws -> Void) throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("dev/a.txt", "A")
        let daemon = try DaemonProcess(["--develop", "--develop-dir", dir.path("dev")], cache: dir.path("cache"))
        defer { _ = daemon.terminate() }
        try body(try daemon.waitUntilServing())
    }
}
