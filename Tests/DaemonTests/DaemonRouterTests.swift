import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing
@testable import Daemon
import ResourceCache
import RouteSync
import TestOrigin

/// The router as a connection calls it, over the daemon's real parts (`DaemonParts`) with a cache
/// in a scratch folder and the in-process origin as the remote: each answer's status and envelope,
/// the write guard's refusals, and one sync for every request made while it was pending.
@Suite(.awaitsCleanups) struct DaemonRouterTests {
    struct Answer {
        var status: Int
        var head: String
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    /// One daemon's parts, nothing started: no socket, no scheduler.
    struct Daemon {
        let parts: DaemonParts
        let origin: TestOrigin

        init(allowOrigins: [String] = [], trial: TrialOptions = TrialOptions()) async throws {
            let origin = try await TestOrigin()
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("router-\(UUID().uuidString)").path
            Cleanups.add { await origin.shutdown(); try? FileManager.default.removeItem(atPath: root) }
            self.origin = origin
            let settings = SyncSettings(remote: try Remote(origin.url), cache: CacheLayout(root: root + "/cache"), preset: Preset(root: root + "/preset"))
            var options = DaemonOptions()
            options.allowOrigins = allowOrigins
            options.trial = trial
            var logger = Logger(label: "router-test")
            logger.logLevel = .critical
            parts = DaemonParts(settings: settings, develop: nil, options: options,
                                holder: SettingsHolder(ReloadableSettings(sync: settings, trial: options.trial)), logger: logger)
        }

        func request(_ method: HTTPMethod, _ uri: String, headers: [(String, String)] = [], body: String? = nil) async -> Answer {
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: uri)
            head.headers.add(name: "Host", value: "127.0.0.1:8700")
            for (name, value) in headers { head.headers.replaceOrAdd(name: name, value: value) }
            let reply = await parts.router.respond(head, body: body.map { ByteBuffer(string: $0) })
            let text = String(buffer: reply.head.bytes)
            let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
            let content: String = switch reply.body {
            case .bytes(let buffer): String(buffer: buffer)
            case .file(let path, let offset, let length):
                String(decoding: (FileManager.default.contents(atPath: path) ?? Data()).dropFirst(offset).prefix(length), as: UTF8.self)
            default: ""
            }
            return Answer(status: status, head: text, body: content)
        }
    }

    /// Every failure is an envelope whose HTTP status is the error's: a usage error 400, an
    /// unknown control path 404, a method the path does not take 400 with what to use.
    @Test func eachAnswerCarriesItsStatusAndEnvelope() async throws {
        let daemon = try await Daemon()
        let why = await daemon.request(.GET, "/_cenarius/why")
        #expect(why.status == 200 && why.json["reason"] as? String == "not-polled-yet", "\(why.body)")
        let status = await daemon.request(.GET, "/_cenarius/status")
        #expect(status.status == 200 && status.head.contains("application/json"), "\(status.head)")
        let missing = await daemon.request(.GET, "/_cenarius/sync/zzzzzz")
        #expect(missing.status == 404 && missing.json["desc"] as? String == "NOT_FOUND", "\(missing.status) \(missing.body)")
        let wrongMethod = await daemon.request(.GET, "/_cenarius/sync")
        #expect(wrongMethod.status == 400 && (wrongMethod.json["message"] as? String)?.contains("use POST") == true, "\(wrongMethod.body)")
        let badBody = await daemon.request(.POST, "/_cenarius/hold", headers: [("Content-Type", "application/json")], body: "{\"ttl\": \"soon\"}")
        #expect(badBody.status == 400, "\(badBody.status) \(badBody.body)")
        // A uri the cache and preset lack is looked for at the remote: 502 while the remote has no
        // table, 404 once its table says there is no such file.
        #expect(await daemon.request(.GET, "/nothing-here.js").status == 502)
        daemon.origin.publish(["index.html": "v1"])
        let noFile = await daemon.request(.GET, "/nothing-here.js")
        #expect(noFile.status == 404, "\(noFile.status)")
    }

    /// Another origin's page may read nothing that writes or hands out paths; a page of another
    /// host name (DNS rebinding) gets 421; an allowed origin's preflight is answered with CORS.
    @Test func theWriteGuardRefusesOtherPagesAndAnswersAllowedOnes() async throws {
        let daemon = try await Daemon(allowOrigins: ["https://admin.example"])
        let forged = await daemon.request(.POST, "/_cenarius/sync", headers: [("Origin", "https://evil.example")])
        #expect(forged.status == 403 && (forged.json["message"] as? String)?.hasPrefix("forbidden") == true, "\(forged.body)")
        let resolve = await daemon.request(.GET, "/_cenarius/resolve?uri=index.html", headers: [("Origin", "https://evil.example")])
        #expect(resolve.status == 403, "local paths are not handed to another page")
        let rebound = await daemon.request(.GET, "/_cenarius/status", headers: [("Host", "evil.example")])
        #expect(rebound.status == 421, "\(rebound.status)")
        let preflight = await daemon.request(.OPTIONS, "/_cenarius/sync", headers: [("Origin", "https://admin.example"),
                                                                                   ("Access-Control-Request-Method", "POST")])
        #expect(preflight.status == 204 && preflight.head.contains("Access-Control-Allow-Origin: https://admin.example"), "\(preflight.head)")
        let allowed = await daemon.request(.POST, "/_cenarius/sync", headers: [("Origin", "https://admin.example")])
        #expect(allowed.status == 202 && allowed.head.contains("Access-Control-Allow-Origin: https://admin.example"), "\(allowed.head)")
    }

    /// Requests made while a sync is pending are answered by one sync: one poll of the origin, and
    /// every receipt with its outcome.
    @Test func requestsWhileASyncIsPendingShareOneSync() async throws {
        let daemon = try await Daemon()
        daemon.origin.publish(["index.html": "v1"])
        let first = await daemon.request(.POST, "/_cenarius/sync")
        let second = await daemon.request(.POST, "/_cenarius/sync")
        let ids = [first, second].compactMap { $0.json["id"] as? String }
        #expect(first.status == 202 && second.status == 202 && Set(ids).count == 2, "\(first.body) \(second.body)")
        daemon.origin.resetRequests()
        _ = await daemon.parts.coordinator.runOnce(reason: "test")
        #expect(daemon.origin.requests(for: "Routes.json").count == 1, "\(daemon.origin.requests.map(\.path))")
        for id in ids {
            let receipt = await daemon.request(.GET, "/_cenarius/sync/" + id)
            #expect(receipt.status == 200 && receipt.json["status"] as? String == "SUCCEED", "\(receipt.body)")
            #expect((receipt.json["report"] as? [String: Any])?["outcome"] as? String == "committed", "\(receipt.body)")
        }
        let served = await daemon.request(.GET, "/index.html")
        #expect(served.status == 200 && served.body == "v1", "\(served.status) \(served.body)")
    }

    /// Graceful shutdown ends the release state's timers, and none is armed after it: a trial
    /// that begins while the daemon stops rolls nothing back at its deadline (a restart resumes
    /// it with the time left). Beside it, the same trial without the shutdown is rolled back, so
    /// the wait is long enough to tell.
    @Test func noTrialDeadlineFiresAfterShutdown() async throws {
        func committing(_ timeout: Double, stoppedFirst: Bool) async throws -> Daemon {
            let daemon = try await Daemon(trial: TrialOptions(confirmTimeout: timeout))
            daemon.origin.publish(["index.html": "v1"])
            _ = await daemon.parts.coordinator.runOnce(reason: "test")
            if stoppedFirst { await daemon.parts.releases.shutdown() }
            daemon.origin.publish(["index.html": "v2"])
            _ = await daemon.parts.coordinator.runOnce(reason: "test")
            #expect(daemon.parts.releases.view.current.state.trial?.generation == 2)
            return daemon
        }
        let current = { (daemon: Daemon) in GenerationStore(layout: daemon.parts.state.settings.cache).current()?.number }
        let stopped = try await committing(0.3, stoppedFirst: true)
        let running = try await committing(0.3, stoppedFirst: false)
        let deadline = Date().addingTimeInterval(60)
        while current(running) != 1, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(current(running) == 1, "the deadline rolled the running daemon's trial back")
        #expect(current(stopped) == 2, "a deadline fired after shutdown: \(String(describing: stopped.parts.releases.view.current.state.lastRollback))")
    }

    /// The actors whose work is the cache's files run on FileWork's thread, never on Swift's
    /// shared pool, which the router and the scheduler need; the router's own file reads run on
    /// NIO's thread pool. Checked from inside each actor, and from the router's blocking path.
    @Test func fileWorkIsNeverOnTheSharedPool() async throws {
        let daemon = try await Daemon()
        #expect(await daemon.parts.releases.isOnFileWork())
        #expect(await daemon.parts.rollout.isOnFileWork())
        #expect(await daemon.parts.coordinator.isOnFileWork())
        let store = ReportStore(path: NSTemporaryDirectory() + "report-queue-\(UUID().uuidString)", logger: Logger(label: "test"))
        #expect(await store.isOnFileWork())
        // NIO names its pool's threads `TP-#<n>` (the singleton's `SGLTN-TP-#<n>`).
        let thread = try await daemon.parts.router.blocking { () throws(CenariusError) in (Self.threadName(), FileWork.loop.inEventLoop) }
        #expect(thread.0.contains("TP-#") && !thread.1, "\(thread)")
    }

    /// The calling thread's name, as the kernel has it.
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }
}

extension ReleaseSupervisor { func isOnFileWork() -> Bool { FileWork.loop.inEventLoop } }
extension RolloutWatch { func isOnFileWork() -> Bool { FileWork.loop.inEventLoop } }
extension SyncCoordinator { func isOnFileWork() -> Bool { FileWork.loop.inEventLoop } }
extension ReportStore { func isOnFileWork() -> Bool { FileWork.loop.inEventLoop } }
