import Foundation
import Testing
import TestOrigin

/// Promises of the contract that only library tests covered: each runs the built binary as a user would.
@Suite(.awaitsCleanups) struct PromiseTests {
    /// `cenariusd origin DIR` serves a folder and its table as a remote a device syncs from.
    @Test func originServesAFolderAsARemote() async throws {
        let dir = try Scratch.forTest()
        try dir.write("site/index.html", "<h1>hello</h1>")
        try dir.write("site/js/app.js", "app()")
        #expect(try Binary.run(["routes", dir.path("site")]).status == 0)
        let origin = try OriginProcess(dir.path("site"))
        defer { origin.stop() }

        let common = ["--remote", origin.url] + Device(in: dir).flags
        let sync = try Binary.run(["sync", "--json"] + common)
        #expect(sync.status == 0, "\(sync.stderr) \(origin.state)")
        #expect((try? sync.json())?["downloadedFiles"] as? Int == 2, "\(sync.stdout)")
        let resolved = try Binary.run(["resolve", "js/app.js"] + common)
        #expect(try String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8) == "app()")
        // Its ETags make the next poll a 304.
        #expect(try Binary.run(["sync", "--json"] + common).json()["outcome"] as? String == "not-modified")
    }

    /// `--routes-name` is the table's file name on the remote (older Cenarius releases used others).
    @Test func routesNameNamesTheTable() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        origin.publish(["a.txt": "a"])
        origin.put("cenarius-routes.json", #"[{"file": "a.txt", "hash": "\#(TestOrigin.md5(Array("a".utf8)))"}]"#)
        origin.put("Routes.json", "not the table")
        origin.resetRequests()
        let sync = try Binary.run(["sync", "--routes-name", "cenarius-routes.json"] + common)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(origin.requests(for: "cenarius-routes.json").count == 1)
        #expect(origin.requests(for: "Routes.json").isEmpty)
        #expect(try Binary.run(["resolve", "a.txt", "--offline", "--routes-name", "cenarius-routes.json"] + common).status == 0)
    }

    /// G4: an interrupted download resumes where it stopped, with `Range` and `If-Range`.
    @Test func interruptedDownloadResumesWithRange() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        let body = String(repeating: "0123456789abcdef", count: 1 << 16)  // 1 MiB
        origin.publish(["big.bin": body])
        origin.inject(.truncate, on: "big.bin", times: 1)
        let sync = try Binary.run(["sync"] + common)
        #expect(sync.status == 0, "\(sync.stderr)")
        let requests = origin.requests(for: "big.bin")
        try #require(requests.count == 2)
        #expect(requests[0].headers["range"] == nil)
        let range = try #require(requests[1].headers["range"])
        let start = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
        #expect(range.hasPrefix("bytes=") && range.hasSuffix("-") && start > 0 && start < body.utf8.count)
        #expect(requests[1].headers["if-range"] != nil)
        #expect(try Binary.run(["verify"] + common).status == 0)
    }

    /// G5: bodies are capped (`--max-file-size`: exit 4, docs/commands.md), an endless body stops at the cap,
    /// a stalled one at `--timeout` (exit 3); nothing is committed.
    @Test func oversizedEndlessAndStalledBodiesAreRefused() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        origin.publish(["big.bin": String(repeating: "x", count: 8192)])

        let capped = try Binary.run(["sync", "--max-file-size", "4096"] + common)
        #expect(capped.status == 4, "\(capped.stderr)")
        #expect(capped.stderr.contains("big.bin") && capped.stderr.contains("--max-file-size"))

        origin.inject(.endless, on: "big.bin")
        let endless = try Binary.run(["sync", "--max-file-size", "1048576"] + common)
        #expect(endless.status == 4, "\(endless.stderr)")
        #expect(endless.stderr.contains("body larger than"))

        origin.inject(.stall, on: "big.bin")
        let started = Date()
        let stalled = try Binary.run(["sync", "--timeout", "2"] + common)
        #expect(stalled.status == 3, "\(stalled.stderr)")
        // Retries included, a stall costs a bounded time, never forever.
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(try Binary.run(["resolve", "big.bin", "--offline"] + common).status != 0)
    }

    /// G7: a configurable User-Agent, and `Retry-After` on a 503 honoured before the retry.
    @Test func userAgentAndRetryAfterReachTheOrigin() async throws {
        let (origin, _, common) = try await OriginAndDevice.make()
        origin.publish(["a.txt": "a"])
        #expect(try Binary.run(["sync"] + common).status == 0)
        let defaultAgent = try #require(origin.requests(for: "Routes.json").first?.headers["user-agent"])
        #expect(defaultAgent.hasPrefix("cenariusd/"))

        origin.publish(["a.txt": "b"])
        origin.resetRequests()
        origin.inject(.status(503, retryAfter: "2"), on: "Routes.json", times: 1)
        let started = Date()
        let sync = try Binary.run(["sync", "--user-agent", "kiosk-7/1.0"] + common)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(Date().timeIntervalSince(started) >= 1.9)
        let polls = origin.requests(for: "Routes.json")
        #expect(polls.count == 2)
        #expect(polls.allSatisfy { $0.headers["user-agent"] == "kiosk-7/1.0" })
    }
}

/// `cenariusd origin DIR --port 0`, stopped with SIGTERM; its URL is read from what it prints.
/// Its output pipe is kept open for as long as it runs (a closed one would fail its next write).
final class OriginProcess {
    let process = Process()
    let url: String
    private let out = Pipe()

    init(_ folder: String) throws {
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["origin", folder, "--port", "0"]
        process.standardOutput = out
        process.standardError = out
        try process.run()
        var printed = ""
        let deadline = Date().addingTimeInterval(20)
        while !printed.contains("\n"), Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        guard let found = printed.split(separator: " ").last(where: { $0.hasPrefix("http://") }) else {
            process.signal(SIGTERM)
            throw TLSOrigin.Failure("origin printed no URL: \(printed)")
        }
        url = found.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// For a failure's message: whether it still runs, or how it ended.
    var state: String {
        if process.isRunning { return "the origin runs (pid \(process.processIdentifier))" }
        return "the origin ended: \(process.terminationReason == .uncaughtSignal ? "signal" : "status") \(process.terminationStatus)"
    }

    func stop() {
        process.signal(SIGTERM)
        process.waitUntilExit()
    }
}
