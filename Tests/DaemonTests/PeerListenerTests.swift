@testable import Daemon
import Synchronization
import Testing

/// The peer listener's pure parts: who is on the LAN, what `--peer-listen` means, and when a
/// `--peer` is the device itself (docs/peers.md).
@Suite struct PeerListenerTests {
    @Test func subnetsHoldTheirAddressesOnly() throws {
        let lan = try #require(Subnet(cidr: "192.168.1.0/24"))
        #expect(lan.contains(Subnet.address("192.168.1.77")!))
        #expect(!lan.contains(Subnet.address("192.168.2.1")!))
        #expect(!lan.contains(Subnet.address("fd00::1")!))
        // An IPv4 client of a listener on `::` arrives mapped, and is the IPv4 address it is.
        #expect(lan.contains(Subnet.address("::ffff:192.168.1.9")!))
        let odd = try #require(Subnet(cidr: "10.0.0.0/13"))
        #expect(odd.contains(Subnet.address("10.7.255.255")!) && !odd.contains(Subnet.address("10.8.0.0")!))
        let six = try #require(Subnet(cidr: "fd00::/8"))
        #expect(six.contains(Subnet.address("fd12:3456::1")!) && !six.contains(Subnet.address("fe80::1")!))
        #expect(Subnet(cidr: "192.168.1.5")?.prefix == 32)
        #expect(Subnet(address: "192.168.1.5", netmask: "255.255.255.0") == Subnet(cidr: "192.168.1.5/24"))
        #expect(Subnet(cidr: "0.0.0.0/0")!.contains(Subnet.address("8.8.8.8")!))
        for bad in ["192.168.1.0/33", "fd00::/129", "host/24", "192.168.1.0/", "192.168.1.0/-1", ""] {
            #expect(Subnet(cidr: bad) == nil, "\(bad)")
        }
    }

    @Test func theListenAddressIsAnIPAndAPort() {
        #expect(PeerServeOptions(listen: "192.168.1.20:8701").map { [$0.host, "\($0.port)"] } == ["192.168.1.20", "8701"])
        #expect(PeerServeOptions(listen: "[fd00::5]:8701")?.host == "fd00::5")
        #expect(PeerServeOptions(listen: "0.0.0.0:0")?.port == 0)
        let defaults = PeerServeOptions(host: "127.0.0.1", port: 8701)
        #expect(defaults.maxConnections == 16 && defaults.maxRate == 4 << 20, "docs/peers.md says these")
        for bad in ["8701", "eth0:8701", "192.168.1.20", "192.168.1.20:70000", "192.168.1.20:x", "[fd00::5]"] {
            #expect(PeerServeOptions(listen: bad) == nil, "\(bad)")
        }
    }

    /// Peers fetching a release this device does not: one poll for each release they name, "not
    /// yet" for ten seconds after it, none within five seconds of another (docs/peers.md).
    @Test func aDeviceBehindItsPeersPollsOnceForEachRelease() {
        let polls = Mutex(0)
        let nudge = PeerNudge { polls.withLock { $0 += 1 } }
        #expect(nudge.nudged(for: "a", now: 1000) && polls.withLock { $0 } == 1)
        #expect(nudge.nudged(for: "a", now: 1009), "its sync is on its way: the asker waits")
        #expect(!nudge.nudged(for: "a", now: 1011), "past ten seconds: a 404, and no second poll for it")
        #expect(!nudge.nudged(for: "b", now: 1004) && polls.withLock { $0 } == 1, "another release within five seconds: no poll")
        #expect(nudge.nudged(for: "b", now: 1020) && polls.withLock { $0 } == 2)
    }

    /// The rate cap's clock: chunks wait their turn; an object of one chunk goes ahead of what is
    /// queued by up to half a second of the cap, its bytes still counted (B11: a small object used
    /// to wait behind a chunk of every large stream).
    @Test func aSmallAnswerGoesAheadOfTheQueueByHalfASecondAndStillCounts() {
        let rate = PeerRate(bytesPerSecond: 1 << 20)
        #expect(rate.reserve(256 << 10, now: 0) == 0)
        for turn in 1...3 { #expect(abs(rate.reserve(256 << 10, now: 0) - Double(turn) * 0.25) < 1e-9) }
        // One second queued: a small answer waits half of it, a large chunk all of it and the small one's.
        #expect(abs(rate.reserve(1 << 10, now: 0, small: true) - (1 - PeerRate.smallBorrow)) < 1e-9)
        #expect(abs(rate.reserve(1 << 10, now: 0.6, small: true)) < 1e-9, "less than the borrow queued: at once")
        #expect(abs(rate.reserve(256 << 10, now: 0.6) - (1 + 2.0 / 1024 - 0.6)) < 1e-9)
        #expect(PeerRate(bytesPerSecond: 0).reserve(1 << 30, now: 0) == 0, "no cap")
    }

    @Test func aDeviceNeverAsksItself() {
        let one = PeerServeOptions(host: "127.0.0.1", port: 8701)
        #expect(one.isSelf("http://127.0.0.1:8701"))
        #expect(one.isSelf("http://localhost:8701/"))
        #expect(!one.isSelf("http://127.0.0.1:8702"))
        #expect(!one.isSelf("http://192.0.2.7:8701"))
        let any = PeerServeOptions(host: "0.0.0.0", port: 8701)
        #expect(any.isSelf("http://127.0.0.2:8701"))
        #expect(any.isSelf("http://[::1]:8701"))
        #expect(!any.isSelf("http://192.0.2.7:8701"))
    }
}
