import Foundation
import Testing
import TestOrigin

/// G3: `kill -9` at any instant leaves the cache at the old or the new generation, never a mix,
/// and the next writer cleans up. Rounds: CENARIUS_CRASH_ROUNDS (default 10, the full run uses 50).
@Suite(.serialized, .awaitsCleanups) struct CrashTests {
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["CENARIUS_CRASH_ROUNDS"] ?? "") ?? 10 }
    static let uris = (0..<24).map { "assets/d\($0 % 4)/file\($0).js" }

    func publish(_ origin: TestOrigin, version: Int) {
        var files: [String: String] = [:]
        for uri in Self.uris { files[uri] = "v\(version) " + uri + String(repeating: ".", count: 2000 + version) }
        origin.publish(files)
    }

    /// Every uri resolves offline, and all to the same version.
    func consistentVersion(_ common: [String]) throws -> Int {
        var versions = Set<Int>()
        for uri in Self.uris {
            let run = try Binary.run(["resolve", uri, "--offline"] + common)
            #expect(run.status == 0, "resolve \(uri): \(run.stderr)")
            let text = try String(contentsOfFile: run.stdout.trimmingCharacters(in: .newlines), encoding: .utf8)
            #expect(text.hasSuffix(String(repeating: ".", count: 10)), "\(uri) is truncated")
            versions.insert(Int(text.dropFirst().prefix { $0 != " " }) ?? -1)
        }
        #expect(versions.count == 1, "a mix of versions: \(versions)")
        return versions.first ?? -1
    }

    @Test func killDashNineDuringSyncNeverLeavesAMix() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let common = ["--remote", origin.url] + Device(in: dir).flags + ["--grace", "0"]
        publish(origin, version: 0)
        #expect(try Binary.run(["sync"] + common).status == 0)
        var random = SplitMix(seed: 0xC3A5_1115)
        var committed = 0
        for round in 1...Self.rounds {
            publish(origin, version: round)
            for uri in Self.uris where random.next() < 0.3 { origin.inject(.delay(0.05 + random.next() * 0.15), on: uri, times: 1) }
            let process = try Binary.start(["sync"] + common)
            usleep(useconds_t(random.next() * 400_000))
            process.signal(SIGKILL)
            process.waitUntilExit()
            origin.clearFaults()

            let verify = try Binary.run(["verify"] + common)
            #expect(verify.status == 0, "round \(round): verify failed after kill: \(verify.stdout) \(verify.stderr)")
            let version = try consistentVersion(common)
            #expect(version == round || version == committed, "round \(round): version \(version)")
            committed = version
        }
        // The next writer cleans temporaries and half-built generations, and finishes the job.
        #expect(try Binary.run(["sync"] + common).status == 0)
        #expect(try consistentVersion(common) == Self.rounds)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("cache/tmp")).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("cache/generations")).allSatisfy { !$0.hasSuffix(".building") })
        #expect(try Binary.run(["verify"] + common).status == 0)
    }

    @Test func killDashNineDuringServeKeepsTheCacheServable() async throws {
        let (origin, dir, common) = try await OriginAndDevice.make()
        var random = SplitMix(seed: 0x5EED)
        for round in 0..<max(3, Self.rounds / 3) {
            publish(origin, version: round)
            for uri in Self.uris where random.next() < 0.3 { origin.inject(.delay(0.05 + random.next() * 0.1), on: uri, times: 1) }
            let daemon = try DaemonProcess(common + ["--grace", "0", "--interval", "3600"], cache: dir.path("cache"))
            _ = try? daemon.waitUntilServing(healthy: false)
            usleep(useconds_t(random.next() * 300_000))
            daemon.process.signal(SIGKILL)
            daemon.process.waitUntilExit()
            origin.clearFaults()
            #expect(try Binary.run(["verify"] + common).status == 0)
            if FileManager.default.fileExists(atPath: dir.path("cache/current")) { _ = try consistentVersion(common) }
        }
        // A fresh daemon starts after the crash (the lock died with the process).
        let daemon = try DaemonProcess(common + ["--interval", "3600"], cache: dir.path("cache"))
        let http = try daemon.waitUntilServing()
        #expect(try http.get("/" + Self.uris[0]).status == 200)
        #expect(daemon.terminate().status == 0)
    }
}
