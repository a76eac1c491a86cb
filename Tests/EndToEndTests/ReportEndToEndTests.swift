import Foundation
import Testing
import TestOrigin

/// `serve --report-url` with the built binary: events posted as CloudEvents batches to a sink
/// (the test origin recording POST bodies), delivered after an outage and after a SIGKILL, the
/// same id on every attempt, and the on-disk queue's bound.
@Suite(.serialized) struct ReportEndToEndTests {
    /// The CloudEvents of every POST the sink saw, attempt by attempt.
    static func batches(_ origin: TestOrigin) -> [[[String: Any]]] {
        origin.requests(for: "events").filter { $0.method == "POST" }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.body)) as? [[String: Any]]
        }
    }

    static func committed(_ batch: [[String: Any]], generation: Int) -> [String: Any]? {
        batch.first { $0["type"] as? String == "dev.cenariusd.committed" && ($0["data"] as? [String: Any])?["generation"] as? Int == generation }
    }

    static func queued(_ cache: String) -> [String] {
        ((try? String(contentsOfFile: cache + "/report-queue", encoding: .utf8)) ?? "").split(separator: "\n").dropFirst().map(String.init)
    }

    /// An origin serving a first release that also takes POSTs on `events`, and a scratch folder.
    static func origin() async throws -> (TestOrigin, Scratch) {
        let origin = try await TestOrigin()
        origin.publish(["index.html": "v1"])
        origin.acceptPosts(on: "events")
        return (origin, try Scratch())
    }

    /// `serve`'s arguments for a daemon of `origin` reporting to `url` (default: its `events`).
    static func serve(_ origin: TestOrigin, _ dir: Scratch, reportURL url: String? = nil) -> [String] {
        ["--remote", origin.url, "--preset", dir.path("preset"), "--interval", "3600", "--report-url", url ?? origin.url + "/events"]
    }

    @Test func eventsReachTheSinkAfterAnOutageWithTheSameIDs() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        origin.inject(.status(503), on: "events", times: 2)
        // Credentials in the URL go to the sink (basic auth) and never to the log (G11).
        let sink = origin.url.replacingOccurrences(of: "http://", with: "http://reporter:s3cret-pass@") + "/events"
        let daemon = try DaemonProcess(Self.serve(origin, dir, reportURL: sink), cache: dir.path("cache"))
        _ = try daemon.waitUntilServing()
        // Two 503s, then a 204: three attempts at the same batch.
        try waitUntil(timeout: 20) { Self.batches(origin).count >= 3 }
        let attempts = Self.batches(origin)
        let ids = try attempts.prefix(3).map { batch in try #require(Self.committed(batch, generation: 1)?["id"] as? String) }
        #expect(Set(ids).count == 1, "the same id on every attempt: \(ids)")
        let event = try #require(Self.committed(attempts[2], generation: 1))
        #expect(event["specversion"] as? String == "1.0")
        #expect((event["source"] as? String)?.hasPrefix("urn:cenariusd:device:") == true)
        #expect((event["time"] as? String)?.hasSuffix("Z") == true)
        let request = try #require(origin.requests(for: "events").last)
        #expect(request.headers["content-type"] == "application/cloudevents-batch+json")
        // Acknowledged: the queue on disk is empty, and nothing more is posted.
        try waitUntil { Self.queued(dir.path("cache")).isEmpty }
        #expect(Self.batches(origin).count == 3)
        #expect(request.headers["authorization"]?.hasPrefix("Basic ") == true)
        #expect(daemon.terminate().status == 0)
        let log = daemon.stderr
        #expect(log.contains("reports not delivered") && !log.contains("s3cret-pass"), "\(log)")
        await origin.shutdown()
    }

    @Test func queuedEventsSurviveASIGKILLAndGoOutWithTheirIDs() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        origin.inject(.drop, on: "events")
        let arguments = Self.serve(origin, dir)
        let first = try DaemonProcess(arguments, cache: dir.path("cache"))
        let http = try first.waitUntilServing()
        origin.publish(["index.html": "v2"])
        _ = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        // A sync that fails is reported too.
        origin.inject(.status(500), on: "Routes.json")
        _ = try waitForReceipt(http, try #require(try http.request("POST", "/_cenarius/sync").json()["id"] as? String))
        try waitUntil(timeout: 20) { Self.queued(dir.path("cache")).count == 3 && Self.batches(origin).contains { Self.committed($0, generation: 2) != nil } }
        let tried = try #require(Self.batches(origin).last { Self.committed($0, generation: 2) != nil })
        let id = try #require(Self.committed(tried, generation: 2)?["id"] as? String)
        #expect(Self.queued(dir.path("cache")).count == 3, "committed 1 and 2, sync-failed: \(Self.queued(dir.path("cache")))")

        first.process.signal(SIGKILL)
        first.process.waitUntilExit()
        origin.clearFaults()
        let second = try DaemonProcess(arguments, cache: dir.path("cache"))
        _ = try second.waitUntilServing()
        try waitUntil(timeout: 20) { Self.queued(dir.path("cache")).isEmpty }
        let delivered = try #require(Self.batches(origin).last)
        #expect(Self.committed(delivered, generation: 2)?["id"] as? String == id, "the id kept across the restart")
        #expect(Self.committed(delivered, generation: 1) != nil)
        #expect(delivered.contains { $0["type"] as? String == "dev.cenariusd.sync-failed" })
        #expect(second.terminate().status == 0)
        await origin.shutdown()
    }

    @Test func aQueueLinkPlantedInTheCacheIsNeverRead() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        // G5: a neighbour plants <cache>/report-queue as a link to a file of event-shaped lines.
        let planted = #"{"data":{},"datacontenttype":"application/json","id":"planted-0","source":"urn:cenariusd:device:x","specversion":"1.0","time":"2026-11-18T11:06:40.000Z","type":"dev.cenariusd.sync-failed"}"#
        try ("{\"dropped\":0}\n" + planted + "\n").write(toFile: dir.path("outside"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: dir.path("cache"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.path("cache/report-queue"), withDestinationPath: dir.path("outside"))
        let daemon = try DaemonProcess(Self.serve(origin, dir), cache: dir.path("cache"))
        _ = try daemon.waitUntilServing()
        try waitUntil(timeout: 20) { Self.batches(origin).contains { Self.committed($0, generation: 1) != nil } }
        let ids = Self.batches(origin).flatMap { $0.compactMap { $0["id"] as? String } }
        #expect(!ids.contains("planted-0"), "\(ids)")
        // The link was replaced, never written through.
        #expect(try String(contentsOfFile: dir.path("outside"), encoding: .utf8).contains("planted-0"))
        #expect(daemon.terminate().status == 0)
        await origin.shutdown()
    }

    /// 1,000 events wait on disk (a long time offline); one more drops the oldest, and the
    /// thousand go out in batches of at most 100, oldest first. (A 503 may still answer the first
    /// attempt after the faults are cleared, so ids are compared as a set: at least once.)
    @Test func theQueueIsBoundedAndDrainsInBatches() async throws {
        let (origin, dir) = try await Self.origin()
        defer { dir.remove() }
        origin.inject(.status(503), on: "events")
        let seeded = (0..<1000).map { n in
            #"{"data":{"generation":null,"time":1795000000},"datacontenttype":"application/json","id":"seed-\#(n)","source":"urn:cenariusd:device:test","specversion":"1.0","time":"2026-11-18T11:06:40.000Z","type":"dev.cenariusd.sync-failed"}"#
        }
        try FileManager.default.createDirectory(atPath: dir.path("cache"), withIntermediateDirectories: true)
        try (#"{"dropped":5}"# + "\n" + seeded.joined(separator: "\n") + "\n").write(toFile: dir.path("cache/report-queue"), atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(Self.serve(origin, dir), cache: dir.path("cache"))
        _ = try daemon.waitUntilServing()
        try waitUntil { Self.queued(dir.path("cache")).contains { $0.contains("dev.cenariusd.committed") } }
        let queue = try String(contentsOfFile: dir.path("cache/report-queue"), encoding: .utf8)
        #expect(queue.hasPrefix(#"{"dropped":6}"#), "\(queue.prefix(40))")
        #expect(Self.queued(dir.path("cache")).count == 1000)
        #expect(!queue.contains(#""seed-0""#) && queue.contains(#""seed-1""#))

        origin.resetRequests()
        origin.clearFaults()
        try waitUntil(timeout: 30) { Self.queued(dir.path("cache")).isEmpty }
        let batches = Self.batches(origin)
        #expect(batches.allSatisfy { $0.count <= 100 })
        let ids = batches.flatMap { $0.compactMap { $0["id"] as? String } }
        #expect(Set(ids) == Set((1..<1000).map { "seed-\($0)" }).union(ids.filter { !$0.hasPrefix("seed-") }) && Set(ids).count == 1000,
                "\(Set(ids).count) distinct of \(ids.count)")
        #expect(ids.first == "seed-1" && batches.last.flatMap { Self.committed($0, generation: 1) } != nil)
        #expect(daemon.terminate().status == 0)
        await origin.shutdown()
    }

    @Test func aReportURLThatIsNotHTTPIsAUsageError() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let run = try Device(in: dir).run(["serve", "--port", "0", "--report-url", "ftp://user:secret@sink.example/events"])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("report-url") && !run.stderr.contains("secret"), "\(run.stderr)")
    }
}
