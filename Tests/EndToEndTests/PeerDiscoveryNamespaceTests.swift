import Foundation
import Testing
import TestOrigin

/// Peers found by DNS-SD on a real LAN (docs/peers.md): three device namespaces on a bridge, each
/// with its own system bus (a dbus-daemon on a socket of its own, `DBUS_SYSTEM_BUS_ADDRESS`) and
/// its own avahi-daemon (in a private mount namespace, for /run/avahi-daemon), the built binary as
/// each device. B, given no `--peer`, installs from A found by DNS-SD, never from C (another
/// channel); with the avahi-daemons killed mid-run B's sync of the next release succeeds from the
/// origin; when they return A is announced again, with its new release in its TXT records; two
/// liars in the records (one naming release 3 it does not hold, one a newer head of another table)
/// cost B 404s from the first and nothing from the second, and A still gives it release 3. Needs
/// root, `ip netns`, dbus-daemon and avahi-daemon (skipped otherwise, outside CI).
@Suite(.awaitsCleanups) struct PeerDiscoveryNamespaceTests {
    static let tools = ["/usr/bin/dbus-daemon", "/usr/sbin/avahi-daemon", "/usr/bin/avahi-browse", "/usr/bin/unshare"]
        .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

    /// The namespaces, buses and daemons of one run, all removed at the end.
    final class LAN: @unchecked Sendable {  // Used from one test's task; the processes are only killed at cleanup.
        let tag = String(UUID().uuidString.prefix(5)).lowercased()
        let dir: String
        let devices = ["a", "b", "c"]
        var pids: [String: pid_t] = [:]

        init(dir: String) { self.dir = dir }

        func ns(_ device: String) -> String { "cnd\(tag)\(device)" }
        func address(_ device: String) -> String { "10.79.0.\(devices.firstIndex(of: device)! + 1)" }
        func bus(_ device: String) -> String { "\(dir)/\(device)/bus" }
        var environment: [String: String] { ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CENARIUS_") } }

        /// A bridge in a namespace of its own, and each device's veth on it.
        func build() throws {
            let bridge = ns("br")
            #expect(try PeersNamespaceTests.LAN.ip(["netns", "add", bridge]) == 0)
            #expect(try PeersNamespaceTests.LAN.ip(["-n", bridge, "link", "add", "br0", "type", "bridge"]) == 0)
            #expect(try PeersNamespaceTests.LAN.ip(["-n", bridge, "link", "set", "br0", "up"]) == 0)
            for device in devices {
                let (outer, inner) = ("cnd\(tag)\(device)0", "cnd\(tag)\(device)1")
                for arguments in [["netns", "add", ns(device)], ["link", "add", outer, "type", "veth", "peer", "name", inner],
                                  ["link", "set", outer, "netns", bridge], ["link", "set", inner, "netns", ns(device)],
                                  ["-n", bridge, "link", "set", outer, "master", "br0"], ["-n", bridge, "link", "set", outer, "up"],
                                  ["-n", ns(device), "addr", "add", address(device) + "/24", "dev", inner],
                                  ["-n", ns(device), "link", "set", inner, "up"], ["-n", ns(device), "link", "set", "lo", "up"]] {
                    #expect(try PeersNamespaceTests.LAN.ip(arguments) == 0, "ip \(arguments)")
                }
                try FileManager.default.createDirectory(atPath: "\(dir)/\(device)", withIntermediateDirectories: true)
                try """
                    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                    <busconfig><type>system</type><listen>unix:path=\(bus(device))</listen><auth>EXTERNAL</auth>
                    <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy></busconfig>
                    """.write(toFile: "\(dir)/\(device)/bus.conf", atomically: true, encoding: .utf8)
                try """
                    [server]
                    host-name=device-\(device)-\(tag)
                    use-ipv6=no
                    enable-dbus=yes
                    [publish]
                    publish-hinfo=no
                    publish-workstation=no
                    """.write(toFile: "\(dir)/\(device)/avahi.conf", atomically: true, encoding: .utf8)
                try start("bus-\(device)", "/usr/bin/dbus-daemon", ["--config-file=\(dir)/\(device)/bus.conf", "--nofork", "--nopidfile"])
                try waitUntil { FileManager.default.fileExists(atPath: bus(device)) }
            }
        }

        /// The device's avahi-daemon, as root, in its namespace, with a /run of its own (its pid
        /// file and socket are at fixed paths there).
        func startAvahi(_ device: String) throws {
            try start("avahi-\(device)", "/usr/sbin/ip", ["netns", "exec", ns(device), "unshare", "-m", "sh", "-c",
                      "mount -t tmpfs tmpfs /run && mkdir /run/avahi-daemon && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f \(dir)/\(device)/avahi.conf"],
                      bus: device, log: "\(dir)/\(device)/avahi.log")
        }

        /// The binary in the device's namespace, on its bus, its log in `log(device)`.
        func startDaemon(_ device: String, _ arguments: [String]) throws {
            try start("daemon-\(device)", "/usr/sbin/ip", ["netns", "exec", ns(device), Binary.path] + arguments, bus: device, log: log(device))
        }

        /// Spawned with posix_spawn and reaped with waitpid, by pid: this suite's dozen children of
        /// the test process are not left to Foundation's Process, whose exit watch lost some here.
        func start(_ role: String, _ executable: String, _ arguments: [String], bus device: String? = nil, log: String? = nil) throws {
            var environment = environment
            environment["XDG_CONFIG_HOME"] = "/nonexistent-config-home"
            if let device { environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + bus(device) }
            pids[role] = try Self.spawn(executable, arguments, environment: environment, output: log ?? "/dev/null")
        }

        static func spawn(_ executable: String, _ arguments: [String], environment: [String: String], output: String) throws -> pid_t {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            // A clean signal mask: a test thread's blocked signals must not reach the daemons.
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
            return pid
        }

        func signal(_ role: String, _ number: Int32) {
            guard let pid = pids[role] else { return }
            kill(pid, number)
            if number == SIGKILL {
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                pids[role] = nil
            }
        }

        func log(_ device: String) -> String { "\(dir)/\(device)/daemon.log" }
        func lines(_ device: String, _ what: String) -> [String] {
            ((try? String(contentsOfFile: log(device), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init).filter { $0.contains(what) }
        }

        /// A command in the device's namespace, on its bus, to its end (killed after 30 s): its status and output.
        func run(_ device: String, _ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
            let output = "\(dir)/run-\(UUID().uuidString.prefix(8))"
            defer { unlink(output) }
            var environment = environment
            environment["XDG_CONFIG_HOME"] = "/nonexistent-config-home"
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + bus(device)
            let pid = try Self.spawn("/usr/sbin/ip", ["netns", "exec", ns(device), executable] + arguments, environment: environment, output: output)
            let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            watchdog.cancel()
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return ((status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1, text)
        }

        /// `avahi-browse -rtp _cenarius._tcp` on `device`: the resolved lines (`=;iface;IPv4;name;type;domain;host;address;port;txt`).
        func browse(_ device: String) throws -> [String] {
            try run(device, "/usr/bin/avahi-browse", ["-rtp", "--no-fail", "_cenarius._tcp"]).stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("=") }
        }

        func remove() {
            for role in pids.keys { signal(role, SIGKILL) }
            for name in devices.map(ns) + [ns("br")] { _ = try? PeersNamespaceTests.LAN.ip(["netns", "del", name]) }
        }
    }

    @Test(.enabled(if: Requirement.inCI || (Requirement.networkNamespaces && tools),
                   "needs root, ip netns, dbus-daemon and avahi-daemon (Debian's dbus-daemon, avahi-daemon, avahi-utils) to build a LAN"))
    func aDeviceFindsItsPeerByDNSSDAndSyncsWithoutAvahi() async throws {
        let site = try await HeadAndStoreTests.Site()
        let first = try site.publish(1, upload: false)
        let lan = LAN(dir: site.dir.path("lan"))
        Cleanups.add { lan.remove() }
        try lan.build()
        for device in lan.devices { try lan.startAvahi(device) }
        let origin = "http://\(lan.address("a")):8801"
        try lan.start("origin", "/usr/sbin/ip", ["netns", "exec", lan.ns("a"), Binary.path, "origin", first, "--port", "8801", "--bind", "0.0.0.0"])
        func device(_ name: String) -> [String] {
            ["--remote", origin] + Device(name, in: site.dir).flags + ["--public-key", site.dir.path("k1.pub")]
        }
        let serve = ["serve", "--start-jitter", "0", "--interval", "3600"]
        func served(_ name: String) throws -> String {
            let resolved = try lan.run(name, Binary.path, ["resolve", "index.html", "--offline"] + Device(name, in: site.dir).flags)
            return (try? String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8)) ?? resolved.stdout
        }
        try waitUntil { try lan.run("a", Binary.path, ["sync", "--json"] + device("a")).status == 0 }
        // A serves and announces (`--peer-discovery auto` with a listener); C does on another channel.
        try lan.startDaemon("a", serve + ["--peer-listen", "\(lan.address("a")):8701"] + device("a"))
        try lan.startDaemon("c", serve + ["--peer-listen", "\(lan.address("c")):8701", "--channel", "other"] + device("c"))
        let announced = try poll("A and C announced, as avahi-browse sees them from B") { () -> [String]? in
            let lines = try lan.browse("b")
            return lines.contains { $0.contains(lan.address("a")) } && lines.contains { $0.contains(lan.address("c")) } ? lines : nil
        }
        let a = try #require(announced.first { $0.contains(lan.address("a")) })
        #expect(a.contains("\"ch=default\"") && a.contains("\"txtvers=1\"") && a.contains("\"rel=") && a.contains(";8701;"), "\(a)")
        #expect(!a.contains(":8801") && !a.contains("http"), "no URL of the remote in the records: \(a)")

        // B is given no peer: it finds A, and not C (another channel's), before its first fetch.
        try lan.startDaemon("b", serve + ["--peer-discovery", "on"] + device("b"))
        let status = try poll("B's first install") { () -> [String: Any]? in
            let run = try lan.run("b", Binary.path, ["status", "--json"] + Device("b", in: site.dir).flags)
            guard run.status == 0, let json = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
                  let sync = json["sync"] as? [String: Any], (sync["bytesFromPeers"] as? Int ?? 0) > 0 else { return nil }
            return sync
        }
        #expect(status["bytesFromOrigin"] as? Int == 0, "the origin sent B no object: \(status)")
        #expect(!lan.lines("b", "found a peer").filter { $0.contains("http://\(lan.address("a")):8701") }.isEmpty)
        #expect(lan.lines("b", "found a peer").filter { $0.contains(lan.address("c")) }.isEmpty, "C is another channel's: \(lan.lines("b", "peer"))")
        #expect(lan.lines("a", "found a peer").isEmpty, "A never lists itself (B does not announce, C is another channel's): \(lan.lines("a", "found a peer"))")
        #expect(try lan.run("b", Binary.path, ["verify"] + Device("b", in: site.dir).flags).status == 0)

        // The avahi-daemons die; a release comes; B's sync of it succeeds from the origin.
        lan.signal("avahi-a", SIGKILL)
        lan.signal("avahi-b", SIGKILL)
        try waitUntil { !lan.lines("b", "avahi-daemon left the system bus").isEmpty }
        let second = try site.publish(2, upload: false)
        lan.signal("origin", SIGKILL)
        try lan.start("origin", "/usr/sbin/ip", ["netns", "exec", lan.ns("a"), Binary.path, "origin", second, "--port", "8801", "--bind", "0.0.0.0"])
        try waitUntil { try lan.run("a", "/usr/bin/curl", ["-sf", "-o", "/dev/null", origin + "/index.html"]).status == 0 }
        lan.signal("daemon-a", SIGHUP)
        lan.signal("daemon-b", SIGHUP)
        try waitUntil { try served("b") == "<h1>release 2</h1>" }
        try waitUntil { try served("a") == "<h1>release 2</h1>" }

        // They return: A announces again, with release 2's table in its records, and B finds it again.
        try lan.startAvahi("a")
        try lan.startAvahi("b")
        try waitUntil { lan.lines("b", "found a peer").filter { $0.contains(lan.address("a")) }.count >= 2 }
        #expect(lan.lines("a", "avahi-daemon is back").count == 1)
        let again = try poll("A announced again") { try lan.browse("b").first { $0.contains(lan.address("a")) } }
        let release = { (line: String) in line.components(separatedBy: "\"rel=").last?.prefix(16) }
        #expect(release(again) != release(a), "the records name the release A holds now: \(again)")

        // Two liars announced from C's namespace, on B's channel, each an HTTP server that holds
        // nothing (404 to every path): one names release 3's table, which it does not hold; one a
        // newer head (`v=`) of a table no head names. B keeps the first (it costs 404s, and those
        // files come from the origin) and never asks the second; it still takes from A, which
        // holds release 3, and writes no wrong byte.
        let third = try site.publish(3, upload: false)
        let digest = String(TestOrigin.sha256(Array(try Data(contentsOf: URL(fileURLWithPath: third + "/Routes.json")))).prefix(16))
        try FileManager.default.createDirectory(atPath: site.dir.path("empty"), withIntermediateDirectories: true)
        let liars = [("cenarius-liar", "8702", ["rel=" + digest, "v=1"]), ("cenarius-newer", "8703", ["rel=" + String(repeating: "f", count: 16), "v=99999999999999"])]
        for (name, port, records) in liars {
            try lan.start(name + "-http", "/usr/sbin/ip", ["netns", "exec", lan.ns("c"), "/usr/bin/python3", "-m", "http.server", port, "--bind", lan.address("c"),
                                                           "--directory", site.dir.path("empty")], log: site.dir.path(name + ".log"))
            try lan.start(name, "/usr/sbin/ip", ["netns", "exec", lan.ns("c"), "/usr/bin/avahi-publish", "-s", name, "_cenarius._tcp", port,
                                                 "txtvers=1", "ch=default", "id=" + name] + records, bus: "c")
        }
        try waitUntil { ["8702", "8703"].allSatisfy { port in lan.lines("b", "found a peer").contains { $0.contains(":\(port)") } } }
        func fromPeers() throws -> Int {
            let run = try lan.run("b", Binary.path, ["status", "--json", "--cache", site.dir.path("b/cache"), "--preset", site.dir.path("b/preset")])
            let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            return (json?["sync"] as? [String: Any])?["bytesFromPeers"] as? Int ?? 0
        }
        let before = try fromPeers()
        lan.signal("origin", SIGKILL)
        try lan.start("origin", "/usr/sbin/ip", ["netns", "exec", lan.ns("a"), Binary.path, "origin", third, "--port", "8801", "--bind", "0.0.0.0"])
        try waitUntil { try lan.run("a", "/usr/bin/curl", ["-sf", "-o", "/dev/null", origin + "/index.html"]).status == 0 }
        lan.signal("daemon-a", SIGHUP)
        try waitUntil { try served("a") == "<h1>release 3</h1>" }
        lan.signal("daemon-b", SIGHUP)
        try waitUntil { try served("b") == "<h1>release 3</h1>" }
        #expect(try fromPeers() > before, "B took release 3 from A, not from the origin alone (the newer liar drew nothing)")
        let asked = { (name: String) in ((try? String(contentsOfFile: site.dir.path(name + ".log"), encoding: .utf8)) ?? "").components(separatedBy: "\"GET ").count - 1 }
        #expect(asked("cenarius-liar") > 0, "the liar naming release 3 was asked, and answered 404")
        #expect(asked("cenarius-newer") == 0, "the one naming another release was never asked")
        #expect(try lan.run("b", Binary.path, ["verify", "--cache", site.dir.path("b/cache"), "--preset", site.dir.path("b/preset")]).status == 0)
    }
}
