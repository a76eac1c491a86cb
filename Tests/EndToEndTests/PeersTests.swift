import Foundation
import Synchronization
import Testing
import TestOrigin

/// LAN peers through the built binary over loopback (docs/peers.md): a device serving its cache's
/// objects on `--peer-listen`, another taking a first install and then a release from it with the
/// origin sending (almost) nothing but the head and the table; a hostile peer (wrong bytes, a
/// stall, a body cut short, a dropped connection) costing seconds and never a wrong byte; and the
/// peer listener answering objects only, only to the addresses it allows.
@Suite(.awaitsCleanups) struct PeersTests {
    /// The store's object names: what a device must not have asked the origin for when a peer held them.
    static let objectFolders = ["_cenarius/f/", "_cenarius/z/", "_cenarius/p/", "_cenarius/pack/"]

    static func objectRequests(_ origin: TestOrigin) -> [String] {
        origin.requests.map(\.path).filter { path in objectFolders.contains { path.hasPrefix($0) } || path.hasPrefix("js/") || path.hasPrefix("static/") }
    }

    /// `sync` for the device whose cache is `name`, with `extra` flags (`--peer URL`).
    static func sync(_ site: HeadAndStoreTests.Site, _ name: String, _ extra: [String] = []) throws -> [String: Any] {
        let run = try Device(name, in: site.dir).run(["sync", "--json", "--remote", site.origin.url, "--public-key", site.dir.path("k1.pub")] + extra)
        #expect(run.status == 0, "\(name): \(run.stderr)")
        return try run.json()
    }

    /// Bytes zstd cannot shrink: the origin's form of them is as large as they are.
    static func noise(_ count: Int) -> Data {
        var state: UInt64 = 7
        return Data((0..<count).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
    }

    static func served(_ site: HeadAndStoreTests.Site, _ name: String) throws -> String {
        try Device(name, in: site.dir).served()
    }

    /// A daemon on the cache `name` serving its objects to peers on a free loopback port.
    static func peer(_ site: HeadAndStoreTests.Site, _ name: String, _ extra: [String] = []) throws -> (daemon: DaemonProcess, url: String) {
        let port = try TLSOrigin.freePort()
        let daemon = try DaemonProcess(["--remote", site.origin.url, "--preset", site.dir.path("\(name)/preset"), "--public-key", site.dir.path("k1.pub"),
                                        "--peer-listen", "127.0.0.1:\(port)"] + extra, cache: site.dir.path("\(name)/cache"))
        _ = try daemon.waitUntilServing()
        try waitUntil { LoopbackSocket.connect(port: port).map { close($0) } != nil }
        return (daemon, "http://127.0.0.1:\(port)")
    }

    @Test func aFirstInstallAndAReleaseComeFromAPeer() async throws {
        let site = try await HeadAndStoreTests.Site()
        try site.publish(1)
        #expect(try Self.sync(site, "a")["outcome"] as? String == "committed")
        let (daemon, peer) = try Self.peer(site, "a")
        defer { _ = daemon.terminate() }

        site.origin.resetRequests()
        let install = try Self.sync(site, "b", ["--peer", peer])
        #expect(install["outcome"] as? String == "committed")
        #expect(try Self.served(site, "b") == "<h1>release 1</h1>")
        let fromPeers = try #require(install["bytesFromPeers"] as? Int)
        #expect(fromPeers > 30_000 && install["bytesFromOrigin"] as? Int == 0, "\(install)")
        #expect(Self.objectRequests(site.origin).isEmpty, "the origin sent objects a peer held: \(Self.objectRequests(site.origin))")

        // A release: the serving daemon takes it from the origin, the other device from it.
        try site.publish(2)
        let http = RawHTTP(port: daemon.port)
        #expect(try http.request("POST", "/_cenarius/sync").status == 202)
        try waitUntil { try Self.served(site, "a") == "<h1>release 2</h1>" }
        site.origin.resetRequests()
        let release = try Self.sync(site, "b", ["--peer", peer])
        #expect(release["outcome"] as? String == "committed")
        #expect(try Self.served(site, "b") == "<h1>release 2</h1>")
        #expect(release["bytesFromPeers"] as? Int ?? 0 > 0 && release["bytesFromOrigin"] as? Int == 0, "\(release)")
        #expect(Self.objectRequests(site.origin).isEmpty, "\(Self.objectRequests(site.origin))")
        // Twice in a row, as a user would: nothing to fetch from anyone. The poll's report says
        // what the release in force took from peers and from the origin.
        site.origin.resetRequests()
        let again = try Self.sync(site, "b", ["--peer", peer])
        #expect(again["outcome"] as? String == "not-modified")
        let report = site.origin.requests(for: "Routes.head").last?.headers["cenarius-report"] ?? ""
        #expect(report.hasSuffix(", peer=\(release["bytesFromPeers"] as? Int ?? -1), origin=0"), "\(report)")
        #expect(try Device("b", in: site.dir).verified())
    }

    /// A daemon that takes its releases from a peer says so in `status` and its metrics; a peer
    /// killed mid-transfer costs it seconds and the release comes from the origin.
    @Test func aDaemonCountsItsPeersBytesAndOutlivesAPeerKilledMidTransfer() async throws {
        let site = try await HeadAndStoreTests.Site()
        try site.publish(1)
        #expect(try Self.sync(site, "a")["outcome"] as? String == "committed")
        let (serving, peer) = try Self.peer(site, "a")
        try FileManager.default.createDirectory(atPath: site.dir.path("c"), withIntermediateDirectories: true)
        let device = try DaemonProcess(["--remote", site.origin.url, "--preset", site.dir.path("c/preset"), "--public-key", site.dir.path("k1.pub"),
                                        "--peer", peer], cache: site.dir.path("c/cache"))
        defer { _ = device.terminate() }
        let http = try device.waitUntilServing()
        #expect(try http.get("/index.html").text == "<h1>release 1</h1>")
        let status = try Device("c", in: site.dir).run(["status"])
        #expect(status.stdout.contains("from the origin,") && status.stdout.contains("KiB from peers (since the daemon started)"), "\(status.stdout)")
        let metrics = try http.get("/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("cenarius_fetched_bytes_by_source_total{source=\"peer\"}") }
        #expect(line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0 > 30_000, "\(metrics)")
        _ = serving.terminate()

        // A peer that sends at 100 KiB/s (all its connections together), killed half-way through a
        // release of half a megabyte: the sync ends from the origin, in seconds.
        let (slow, slowURL) = try Self.peer(site, "a", ["--peer-max-rate", "102400"])
        defer { _ = slow.terminate() }
        try site.publish(2, extra: ["media/large.bin": Self.noise(500_000)])
        #expect(try RawHTTP(port: slow.port).request("POST", "/_cenarius/sync").status == 202)
        try waitUntil { try Self.served(site, "a") == "<h1>release 2</h1>" }
        // Killed while the large file is on its way from it.
        let finished = Mutex<Binary.Run?>(nil)
        let done = DispatchSemaphore(value: 0)
        let arguments = ["sync", "--json", "--remote", site.origin.url] + Device("d", in: site.dir).flags
            + ["--public-key", site.dir.path("k1.pub"), "--peer", slowURL]
        DispatchQueue.global().async {
            let run = try? Binary.run(arguments, killAfter: 120)
            finished.withLock { $0 = run }
            done.signal()
        }
        // Half-way: the release takes 5.3 s from this peer alone.
        usleep(2_500_000)
        let killedAt = Date()
        slow.process.signal(SIGKILL)
        done.wait()
        let run = try #require(finished.withLock { $0 })
        #expect(run.status == 0, "\(run.stderr)")
        let killed = try run.json()
        #expect(killed["outcome"] as? String == "committed")
        #expect(Date().timeIntervalSince(killedAt) < 10, "a killed peer cost \(Date().timeIntervalSince(killedAt)) s")
        #expect(killed["bytesFromOrigin"] as? Int ?? 0 > 400_000, "the large file came from the origin: \(killed)")
        #expect(try Self.served(site, "d") == "<h1>release 2</h1>")
        #expect(try Device("d", in: site.dir).verified())
    }

    /// A peer at its cap says "later" (503, Retry-After): the device asks again a second later
    /// rather than take the uplink, and holds nothing against it.
    @Test func aBusyPeerIsWaitedForNotLeft() async throws {
        let site = try await HeadAndStoreTests.Site()
        try site.publish(1)
        #expect(try Self.sync(site, "a")["outcome"] as? String == "committed")
        let (daemon, peer) = try Self.peer(site, "a", ["--peer-max-connections", "2"])
        defer { _ = daemon.terminate() }
        let port = Int(peer.split(separator: ":").last!)!
        usleep(300_000)
        // Two idle connections hold both of its slots for a second and a half.
        let held = [LoopbackSocket.connect(port: port), LoopbackSocket.connect(port: port)].compactMap { $0 }
        #expect(held.count == 2)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { for fd in held { close(fd) } }
        let started = Date()
        let install = try Self.sync(site, "b", ["--peer", peer])
        let seconds = Date().timeIntervalSince(started)
        #expect(install["outcome"] as? String == "committed")
        #expect(install["bytesFromOrigin"] as? Int == 0 && install["bytesFromPeers"] as? Int ?? 0 > 30_000, "\(install)")
        #expect(seconds >= 1 && seconds < 8, "\(seconds) s")
    }

    /// A peer that sends wrong bytes, stalls, cuts a body short or drops the connection: every
    /// file comes from the origin in the same sync, within seconds, and nothing wrong is kept.
    @Test func aHostilePeerCostsSecondsAndNoWrongByte() async throws {
        let site = try await HeadAndStoreTests.Site()
        let folder = try site.publish(1)
        let hostile = try await TestOrigin()
        Cleanups.add { await hostile.shutdown() }
        let table = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/Routes.json"))) as? [[String: Any]])
        let faults: [Fault] = [.corrupt, .stall, .truncate, .drop, .status(500)]
        for (n, entry) in table.enumerated() {
            let (uri, hash) = (try #require(entry["uri"] as? String), try #require(entry["hash"] as? String))
            let path = "_cenarius/f/\(hash)"
            hostile.put(path, Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + uri))))
            hostile.inject(faults[n % faults.count], on: path)
        }
        for round in 1...2 {
            let started = Date()
            let install = try Self.sync(site, "b\(round)", ["--peer", hostile.url])
            #expect(install["outcome"] as? String == "committed")
            #expect(install["bytesFromPeers"] as? Int == 0, "\(install)")
            #expect(Date().timeIntervalSince(started) < 10, "a hostile peer cost \(Date().timeIntervalSince(started)) s \(install["seconds"] ?? 0)")
            #expect(try Self.served(site, "b\(round)") == "<h1>release 1</h1>")
            #expect(try Device("b\(round)", in: site.dir).run(["verify"]).status == 0)
            let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: site.dir.path("b\(round)/cache/tmp"))) ?? []
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
        #expect(hostile.requests.filter { $0.path.hasPrefix("_cenarius/f/") }.count >= 2, "the hostile peer was asked")
        // Peers are asked for zstd (their listener compresses on the fly); the origin's files are not.
        #expect(hostile.requests.filter { $0.path.hasPrefix("_cenarius/f/") }.allSatisfy { $0.headers["accept-encoding"] == "zstd" })
    }

    /// Objects by hash and nothing else: not the site, not the control API, not a table, not a
    /// path around the store; and not to an address outside the allowed subnets.
    @Test func thePeerListenerServesObjectsOnlyAndOnlyToTheLAN() async throws {
        let site = try await HeadAndStoreTests.Site()
        let folder = try site.publish(1, extra: ["media/large.bin": Self.noise(300_000)])
        #expect(try Self.sync(site, "a")["outcome"] as? String == "committed")
        let (daemon, peer) = try Self.peer(site, "a")
        let listener = RawHTTP(port: Int(peer.split(separator: ":").last!)!)
        let page = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/index.html")))
        let hash = TestOrigin.md5(page)
        let object = try listener.get("/_cenarius/f/\(hash)")
        #expect(object.status == 200 && object.body == page)
        #expect(try listener.request("HEAD", "/_cenarius/f/\(hash)").status == 200)
        for target in ["/index.html", "/Routes.json", "/Routes.head", "/_cenarius/status", "/health", "/metrics", "/_cenarius/f/\(hash)/",
                       "/_cenarius/f/../f/\(hash)", "/_cenarius/f/\(hash.uppercased())", "/_cenarius/f/\(String(repeating: "0", count: 32))",
                       "/_cenarius/f/\(hash)?x=1", "/_cenarius/t/\(hash)"] {
            #expect(try listener.get(target).status == 404, "\(target)")
        }
        #expect(try listener.request("POST", "/_cenarius/sync").status == 405)
        // A peer that accepts zstd gets a compressible object compressed (a third of the LAN's bytes
        // in B11); `zstd -d` gives back its exact bytes. Without the header, the bytes as they are.
        let script = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/js/app.11111111.js")))
        let packed = try listener.get("/_cenarius/f/\(TestOrigin.md5(script))", headers: ["Accept-Encoding": "deflate, gzip, zstd"])
        #expect(packed.status == 200 && packed.headers["content-encoding"] == "zstd" && packed.body.count < script.count / 2,
                "\(packed.status) \(packed.headers) \(packed.body.count) of \(script.count)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/zstd") {
            let unpack = Process()
            unpack.executableURL = URL(fileURLWithPath: "/usr/bin/zstd")
            unpack.arguments = ["-d", "-c"]
            let (input, output) = (Pipe(), Pipe())
            (unpack.standardInput, unpack.standardOutput) = (input, output)
            try unpack.run()
            input.fileHandleForWriting.write(Data(packed.body))
            try input.fileHandleForWriting.close()
            #expect(Array(output.fileHandleForReading.readDataToEndOfFile()) == script)
            unpack.waitUntilExit()
        }
        let plain = try listener.get("/_cenarius/f/\(TestOrigin.md5(script))")
        #expect(plain.headers["content-encoding"] == nil && plain.body == script)
        _ = daemon.terminate()

        // Caps: two connections served at once, 64 more told 503 (come back later), the next
        // closed unanswered; 100 KiB/s for all of them.
        let (capped, cappedURL) = try Self.peer(site, "a", ["--peer-max-connections", "2", "--peer-max-rate", "102400"])
        let cappedPort = Int(cappedURL.split(separator: ":").last!)!
        // The connection that found the listener up holds its slot until its close is read.
        usleep(300_000)
        var held = [LoopbackSocket.connect(port: cappedPort), LoopbackSocket.connect(port: cappedPort)].compactMap { $0 }
        #expect(held.count == 2)
        usleep(200_000)
        let busy = try RawHTTP(port: cappedPort).get("/_cenarius/f/\(hash)")
        #expect(busy.status == 503 && busy.headers["retry-after"] == "10", "\(busy.status) \(busy.headers)")
        usleep(200_000)
        held += (0..<64).compactMap { _ in LoopbackSocket.connect(port: cappedPort) }
        #expect(held.count == 66)
        usleep(300_000)
        let flood = try RawHTTP(port: cappedPort).exchange(Array("GET /_cenarius/f/\(hash) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(flood.isEmpty, "a connection past the busy room got \(flood.count) bytes")
        for fd in held { close(fd) }
        let bundle = Array(Self.noise(300_000))
        try waitUntil { (try? RawHTTP(port: cappedPort).get("/_cenarius/f/\(hash)").status) == 200 }
        let started = Date()
        #expect(try RawHTTP(port: cappedPort).get("/_cenarius/f/\(TestOrigin.md5(bundle))").body == bundle)
        let seconds = Date().timeIntervalSince(started)
        // The first 64 KiB leave at once, the rest at the rate.
        #expect(seconds >= Double(bundle.count - 65_536) / 102_400 * 0.9, "\(bundle.count) bytes in \(seconds) s")
        _ = capped.terminate()

        let (strict, strictURL) = try Self.peer(site, "a", ["--peer-allow", "192.0.2.0/24"])
        defer { _ = strict.terminate() }
        let refused = try RawHTTP(port: Int(strictURL.split(separator: ":").last!)!).exchange(Array("GET /_cenarius/f/\(hash) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(refused.isEmpty, "a client outside --peer-allow got \(refused.count) bytes")
    }
}
