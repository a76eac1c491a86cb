import Foundation
import Testing
import TestOrigin

/// Peers on a real LAN (docs/peers.md): network namespaces joined by veth pairs, each device the
/// built binary in its own namespace. Device A (with the origin beside it) serves its objects on
/// its LAN address; device B on the same subnet takes a first install from it; device C, on
/// another subnet routed through A, is refused by the peer listener (the interface's subnet is
/// the LAN) and installs from the origin. Needs root and `ip netns` (skipped otherwise).
@Suite(.awaitsCleanups) struct PeersNamespaceTests {
    /// Namespaces named for this run, removed (with their veths and what runs in them) at the end.
    final class LAN: @unchecked Sendable {  // Used from one test's task; the processes are only killed at cleanup.
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        var processes: [Process] = []
        var names: [String] { ["a", "b", "c"].map { "cnp\(tag)\($0)" } }
        func ns(_ device: String) -> String { "cnp\(tag)\(device)" }

        @discardableResult
        static func ip(_ arguments: [String]) throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// a —10.77.0.0/24— b, and a —10.78.0.0/24— c with c's default route through a.
        func build() throws {
            for name in names { #expect(try Self.ip(["netns", "add", name]) == 0) }
            let links: [(String, String, String, String, String)] = [
                ("a", "b", "10.77.0.1/24", "10.77.0.2/24", "x"), ("a", "c", "10.78.0.1/24", "10.78.0.2/24", "y"),
            ]
            for (left, right, leftAddress, rightAddress, id) in links {
                let (l, r) = ("cn\(tag)\(id)l", "cn\(tag)\(id)r")
                #expect(try Self.ip(["link", "add", l, "type", "veth", "peer", "name", r]) == 0)
                #expect(try Self.ip(["link", "set", l, "netns", ns(left)]) == 0)
                #expect(try Self.ip(["link", "set", r, "netns", ns(right)]) == 0)
                #expect(try Self.ip(["-n", ns(left), "addr", "add", leftAddress, "dev", l]) == 0)
                #expect(try Self.ip(["-n", ns(right), "addr", "add", rightAddress, "dev", r]) == 0)
                #expect(try Self.ip(["-n", ns(left), "link", "set", l, "up"]) == 0)
                #expect(try Self.ip(["-n", ns(right), "link", "set", r, "up"]) == 0)
            }
            for name in names { #expect(try Self.ip(["-n", name, "link", "set", "lo", "up"]) == 0) }
            #expect(try Self.ip(["-n", ns("c"), "route", "add", "default", "via", "10.78.0.1"]) == 0)
        }

        /// The binary in `device`'s namespace, left running.
        func start(_ device: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            process.arguments = ["netns", "exec", ns(device), Binary.path] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            processes.append(process)
        }

        func run(_ device: String, _ arguments: [String]) throws -> Binary.Run {
            try Binary.run(["netns", "exec", ns(device), Binary.path] + arguments, killAfter: 60, executable: "/usr/sbin/ip")
        }

        func remove() {
            for process in processes where process.isRunning {
                process.signal(SIGKILL)
                process.waitUntilExit()
            }
            for name in names { _ = try? Self.ip(["netns", "del", name]) }
        }
    }

    @Test(.enabled(if: Requirement.inCI || Requirement.networkNamespaces, "needs root and ip netns (network namespaces and veth pairs) to build a LAN"))
    func aDeviceOnTheLANTakesItsInstallFromAPeerAndOneOutsideIsRefused() async throws {
        let site = try await HeadAndStoreTests.Site()
        let folder = try site.publish(1, upload: false)
        let lan = LAN()
        Cleanups.add { lan.remove() }
        try lan.build()
        let origin = "http://10.77.0.1:8801"
        try lan.start("a", ["origin", folder, "--port", "8801", "--bind", "0.0.0.0"])
        func device(_ name: String) -> [String] {
            ["--remote", origin] + Device(name, in: site.dir).flags + ["--public-key", site.dir.path("k1.pub")]
        }
        try waitUntil { try lan.run("a", ["sync", "--json"] + device("a")).status == 0 }
        try lan.start("a", ["serve", "--port", "0", "--start-jitter", "0", "--peer-listen", "10.77.0.1:8701"] + device("a"))
        let peer = "http://10.77.0.1:8701"
        try waitUntil { FileManager.default.fileExists(atPath: site.dir.path("a/cache/daemon.json")) }
        // B is on A's subnet: its files come from A.
        let installed = try poll("b's install from the peer") { () -> [String: Any]? in
            let run = try lan.run("b", ["sync", "--json", "--peer", peer] + device("b"))
            guard run.status == 0, let json = try? run.json(), json["bytesFromPeers"] as? Int ?? 0 > 0 else {
                try? FileManager.default.removeItem(atPath: site.dir.path("b"))  // until A's listener is up
                return nil
            }
            return json
        }
        #expect(installed["outcome"] as? String == "committed" && installed["bytesFromOrigin"] as? Int == 0, "\(installed)")
        // C reaches A's address through A, from another subnet: the listener closes on it, and C
        // installs from the origin.
        let outside = try lan.run("c", ["sync", "--json", "--peer", peer] + device("c"))
        #expect(outside.status == 0, "\(outside.stderr)")
        let json = try outside.json()
        #expect(json["outcome"] as? String == "committed" && json["bytesFromPeers"] as? Int == 0 && json["bytesFromOrigin"] as? Int ?? 0 > 0, "\(json)")
        for name in ["b", "c"] {
            #expect(try Device(name, in: site.dir).verified())
        }
    }
}
