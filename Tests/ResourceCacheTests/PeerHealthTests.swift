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

    /// Rendezvous hashing: every device reckons the same owner for an object whatever the order of
    /// its list; the objects spread evenly; a peer leaving moves only the objects it owned.
    @Test func eachObjectHasOneOwnerEveryDeviceAgreesOn() {
        let peers = (1...8).map { "http://10.0.0.\($0):8701" }
        let objects = (0..<4000).map { n in String(repeating: String(n % 10), count: 4) + "\(n)" }
        let owners = objects.map { PeerChoice.owner(of: $0, among: peers) }
        #expect(objects.map { PeerChoice.owner(of: $0, among: peers.reversed()) } == owners)
        for peer in peers {
            let share = owners.filter { $0 == peer }.count
            #expect(share > 400 && share < 600, "\(peer) owns \(share) of 4000")
        }
        let fewer = Array(peers.dropFirst())
        for (object, owner) in zip(objects, owners) where owner != peers[0] {
            #expect(PeerChoice.owner(of: object, among: fewer) == owner)
        }
        #expect(PeerChoice.owner(of: "a", among: []) == nil)
        #expect(PeerChoice.ranked("a", among: peers).first == PeerChoice.owner(of: "a", among: peers))
        // A fixed function, the same in every process and build (never the seeded Hasher): devices
        // of different builds must still agree. The value is FNV-1a then SplitMix64, worked out apart.
        #expect(PeerChoice.weight("0123", "http://a:1") == 2_293_093_033_091_426_013)
    }

    /// Two connections a peer to a few peers, one each to more, never past eight in all: eight
    /// devices asking one peer fit its default cap of 8 (docs/peers.md).
    @Test func aDeviceSpreadsItsConnectionsOverItsPeers() {
        #expect(PeerSources.connections(asking: 0) == (1, 2))
        #expect(PeerSources.connections(asking: 1) == (2, 2))
        #expect(PeerSources.connections(asking: 4) == (8, 2))
        #expect(PeerSources.connections(asking: 5) == (5, 1))
        #expect(PeerSources.connections(asking: 7) == (7, 1))
        #expect(PeerSources.connections(asking: 30) == (8, 1))
    }

    @Test func peersAreBaseURLs() {
        #expect(PeerSources(urls: ["http://a:1/", "http://b:2"]).urls == ["http://a:1", "http://b:2"])
        #expect(PeerSources(urls: [], me: "http://c:3/").me == "http://c:3")
    }
}
