import ResourceCache
import RouteSync
import Testing
import Transport

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

    /// A stream of a form the peer was still fetching that broke off is forgiven once a minute
    /// (its own download broke), a second within the minute is a fault (docs/peers.md).
    @Test func aBrokenStreamIsForgivenOnceAMinute() {
        let health = PeerHealth()
        #expect(health.forgives(brokenStreamOf: "http://a:1", now: 1000))
        #expect(health.forgives(brokenStreamOf: "http://b:1", now: 1001), "each peer apart")
        #expect(!health.forgives(brokenStreamOf: "http://a:1", now: 1030))
        #expect(health.forgives(brokenStreamOf: "http://a:1", now: 1030 + PeerHealth.faultPause))
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

    /// Shares bounded by bytes (PeerShares): a site whose bytes sit in a few large files still
    /// gives no device much more than an even share (the largest file alone apart); every device
    /// reckons the same owners whatever the order of its lists; most objects stay with their
    /// rendezvous owner.
    @Test func sharesAreEvenInBytesAndTheSameOnEveryDevice() throws {
        let peers = (1...8).map { "http://10.0.0.\($0):8701" }
        var state: UInt64 = 7
        let entries = try (0..<400).map { i -> RouteEntry in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            // Mostly small files, a few of hundreds of kilobytes, one of 1.2 MB.
            let size: Int64 = i == 0 ? 1_200_000 : i % 40 == 0 ? Int64(state >> 46) : Int64(state >> 52) + 1
            return RouteEntry(uri: try URIPath(validating: "f\(i).js"), hash: ContentHash(hex: String(repeating: "0", count: 24) + String(UInt32(truncatingIfNeeded: i * 2_654_435_761) | 1 << 31, radix: 16))!, size: size)
        }
        let shares = PeerShares(entries, among: peers)
        let total = entries.reduce(0) { $0 + Double($1.size!) }
        var load: [String: Double] = [:]
        for entry in entries { load[try #require(shares.owner(of: entry.hash)), default: 0] += Double(entry.size!) }
        let even = total / Double(peers.count), largest = 1_200_000.0
        #expect(load.values.allSatisfy { $0 <= max(PeerShares.slack * even, largest) }, "\(load.values.sorted()) against \(even)")
        let reordered = PeerShares(entries.reversed(), among: peers.reversed())
        #expect(entries.allSatisfy { reordered.owner(of: $0.hash) == shares.owner(of: $0.hash) })
        let kept = entries.filter { shares.owner(of: $0.hash) == PeerChoice.owner(of: $0.hash.hex, among: peers) }.count
        #expect(kept * 2 > entries.count, "\(kept) of \(entries.count) with their rendezvous owner")
        #expect(shares.owner(of: entries[0].hash) == PeerChoice.owner(of: entries[0].hash.hex, among: peers), "the largest goes first, to its first choice")
        #expect(PeerShares(entries, among: []).owner(of: entries[0].hash) == nil)
        let twice = PeerShares(entries, among: peers + [peers[0]])
        #expect(entries.allSatisfy { twice.owner(of: $0.hash) != nil }, "a peer named twice is one")
    }

    /// A release weighed by its forms (the index's sizes), not its files: a large file whose patch
    /// is small no longer fills a device's share, and every device stays near an even share of the
    /// bytes it fetches from the origin for the others (B11: weighed by files, three of eight held
    /// 1.46 of 1.83 MB of patches).
    @Test func sharesAreEvenInTheBytesOfTheFormsTheIndexNames() throws {
        let peers = (1...8).map { "http://10.0.0.\($0):8701" }
        let entries = try (0..<200).map { i -> RouteEntry in
            let hex = String(i * 7919 + 1, radix: 16)
            return RouteEntry(uri: try URIPath(validating: "f\(i).js"), hash: ContentHash(hex: String(repeating: "0", count: 32 - hex.count) + hex)!,
                              size: i % 10 == 0 ? 4_000_000 : 50_000)
        }
        // The large files changed little (30 kB patches); the small ones are new (20 kB forms).
        let forms = Dictionary(uniqueKeysWithValues: entries.map { ($0.hash, $0.size! > 1_000_000 ? Int64(30_000) : 20_000) })
        let load = { (shares: PeerShares) -> [String: Int64] in
            entries.reduce(into: [:]) { load, entry in load[shares.owner(of: entry.hash)!, default: 0] += forms[entry.hash]! }
        }
        let even = Double(forms.values.reduce(0, +)) / Double(peers.count)
        let weighed = load(PeerShares(entries, among: peers, bytes: forms))
        #expect(weighed.values.allSatisfy { Double($0) <= PeerShares.slack * even + 30_000 }, "\(weighed.values.sorted()) against \(even)")
        // By the files' sizes the same release is lopsided: what the index's sizes are for.
        let byFiles = load(PeerShares(entries, among: peers))
        #expect(byFiles.values.contains { Double($0) > 1.3 * even } || byFiles.values.contains { Double($0) < 0.7 * even }, "\(byFiles.values.sorted())")
    }

    /// Two connections a peer to up to eight peers, one each to more, never past sixteen in all:
    /// eight devices asking one peer fit its default cap of 16 (docs/peers.md).
    @Test func aDeviceSpreadsItsConnectionsOverItsPeers() {
        #expect(PeerSources.connections(asking: 0) == (1, 2))
        #expect(PeerSources.connections(asking: 1) == (2, 2))
        #expect(PeerSources.connections(asking: 7) == (14, 2))
        #expect(PeerSources.connections(asking: 8) == (16, 2))
        #expect(PeerSources.connections(asking: 9) == (9, 1))
        #expect(PeerSources.connections(asking: 30) == (16, 1))
    }

    /// The largest first, then the rest smallest first, unknown sizes last (docs/peers.md).
    @Test func aShareGoesLargestThenSmallestFirst() {
        #expect(ShareOrder.indices([30, 10, nil, 500, 20, 10]) == [3, 1, 5, 4, 0, 2])
        #expect(ShareOrder.indices([nil, nil]) == [0, 1])
        #expect(ShareOrder.indices([]) == [])
    }

    @Test func peersAreBaseURLs() {
        #expect(PeerSources(urls: ["http://a:1/", "http://b:2"]).urls == ["http://a:1", "http://b:2"])
        #expect(PeerSources(urls: [], me: "http://c:3/").me == "http://c:3")
    }
}
