import ResourceCache
import Testing

/// Which peers a device asks, and for how long a bad one is left alone (docs/peers.md).
@Suite struct PeerHealthTests {
    @Test func aFailingPeerIsAvoidedForAMinuteAndAWrongOneForHalfAnHour() {
        let health = PeerHealth()
        let peers = ["http://a:1", "http://b:1", "http://c:1"]
        health.record(.fault, peer: "http://a:1", now: 1000)
        health.record(.wrongBytes, peer: "http://b:1", now: 1000)
        #expect(health.usable(peers, now: 1000) == ["http://c:1"])
        #expect(health.usable(peers, now: 1000 + PeerHealth.faultPause) == ["http://a:1", "http://c:1"])
        #expect(health.usable(peers, now: 1000 + PeerHealth.wrongBytesPause) == peers)
        // A fault after wrong bytes does not shorten the pause.
        health.record(.wrongBytes, peer: "http://c:1", now: 2000)
        health.record(.fault, peer: "http://c:1", now: 2001)
        #expect(!health.usable(peers, now: 2001 + PeerHealth.faultPause).contains("http://c:1"))
        #expect(PeerHealth.faultPause == 60 && PeerHealth.wrongBytesPause == 1800, "docs/peers.md says these")
    }

    @Test func objectsAreSpreadOverThePeersFromTheStartGiven() {
        #expect(PeerChoice.assign(5, to: ["a", "b"], start: 1) == ["b", "a", "b", "a", "b"])
        #expect(PeerChoice.assign(3, to: [], start: 0).isEmpty)
        let spread = PeerChoice.assign(300, to: ["a", "b", "c"], start: 2)
        #expect(["a", "b", "c"].allSatisfy { peer in spread.filter { $0 == peer }.count == 100 })
    }

    @Test func peersAreBaseURLs() {
        #expect(PeerSources(urls: ["http://a:1/", "http://b:2"]).urls == ["http://a:1", "http://b:2"])
    }
}
