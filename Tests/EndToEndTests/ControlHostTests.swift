import Foundation
import Testing
import TestOrigin

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30's HTTP findings against the built binary: reads by DNS rebinding, over-long ranges,
/// and event streams that leave without reading.
@Suite(.awaitsCleanups) struct ControlHostTests {
    func daemon(_ extra: [String] = []) async throws -> (DaemonProcess, RawHTTP) {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "0123456789", "app.js": "one()"])
        let daemon = try Device(in: dir).serve(remote: origin.url, extra)
        return (daemon, try daemon.waitUntilServing())
    }

    @Test func readsByDNSRebindingAreRefusedOnEveryControlPath() async throws {
        let (daemon, http) = try await daemon(["--allow-origin", "http://app.example:3000"])
        defer { _ = daemon.terminate() }
        let port = http.port
        let reads = ["/_cenarius/status", "/_cenarius/resolve?uri=app.js", "/health", "/_cenarius/sync/000001", "/_cenarius/events"]
        for target in reads {
            // A page on a rebinding domain: its own name as Host, no Origin, a same-origin GET.
            let rebound = try http.get(target, headers: ["Host": "evil.example:\(port)"])
            #expect(rebound.status == 421, "\(target) → \(rebound.status)")
            #expect(!rebound.text.contains("/cache"), "no local path in the refusal of \(target)")
        }
        // The daemon's own names and the --allow-origin host read as before.
        for host in ["127.0.0.1:\(port)", "localhost:\(port)", "127.0.0.1", "app.example:3000"] {
            #expect(try http.get("/_cenarius/status", headers: ["Host": host]).status == 200, "Host \(host)")
        }
        // Files are not control paths: served whatever the Host (a name in front of the daemon).
        #expect(try http.get("/app.js", headers: ["Host": "evil.example"]).text == "one()")

        // Absolute-form targets (RFC 9112 §3.2.2): the target's authority is the host.
        let absolute = try http.get("http://127.0.0.1:\(port)/_cenarius/resolve?uri=app.js", headers: ["Host": "127.0.0.1:\(port)"])
        #expect(absolute.status == 200, "\(absolute.text)")
        #expect(try http.get("http://127.0.0.1:\(port)/app.js").text == "one()")
        #expect(try http.get("http://evil.example:\(port)/_cenarius/status", headers: ["Host": "127.0.0.1:\(port)"]).status == 421)
    }

    @Test func overLongRangesAreClampedTo206WithTheWholeFile() async throws {
        let (daemon, http) = try await daemon()
        defer { _ = daemon.terminate() }
        for range in ["bytes=0-99999999999999999999", "bytes=-99999999999999999999", "bytes=-11", "bytes=0-10"] {
            for round in 0..<2 {
                let reply = try http.get("/index.html", headers: ["Range": range])
                #expect(reply.status == 206, "\(range) (round \(round)) → \(reply.status)")
                #expect(reply.headers["content-range"] == "bytes 0-9/10", "\(range)")
                #expect(reply.text == "0123456789")
            }
        }
        #expect(try http.get("/index.html", headers: ["Range": "bytes=4-99999999999999999999"]).text == "456789")
    }

    @Test func anEventStreamThatNeverReadsLeavesTheGaugeWhenItDisconnects() async throws {
        let (daemon, http) = try await daemon()
        defer { _ = daemon.terminate() }
        func streams() throws -> Double? {
            let line = try http.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("cenarius_event_streams ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        // Three clients ask for the stream, never read a byte, and hang up.
        for _ in 0..<3 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(http.port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0)
            let request = Array("GET /_cenarius/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            try waitUntil { try streams() ?? 0 >= 1 }
            close(fd)
        }
        try waitUntil { try streams() == 0 }
    }
}
