import Daemon
import ResourceCache
import Testing

/// DNS-SD's pure parts (docs/peers.md): what the TXT records say and how they are read, and
/// which found peers a sync asks.
@Suite struct PeerDiscoveryTests {
    @Test func theTXTRecordsSayTheChannelTheReleaseAndTheInstance() throws {
        let said = PeerAnnouncement(channel: "beta", release: String(repeating: "ab", count: 32), version: 1795400000123, instance: "5eed")
        let text = said.txt.map { String(decoding: $0, as: UTF8.self) }
        #expect(text == ["txtvers=1", "ch=beta", "id=5eed", "rel=abababababababab", "v=1795400000123"])
        #expect(PeerAnnouncement(txt: said.txt) == said)
        // Before a first install: no release, no version.
        let empty = PeerAnnouncement(channel: "default", release: nil, version: nil, instance: "1")
        #expect(empty.txt.count == 3 && PeerAnnouncement(txt: empty.txt) == empty)
        // Another format, or records without a channel or an id, are not a peer's.
        #expect(PeerAnnouncement(txt: [Array("txtvers=2".utf8), Array("ch=beta".utf8), Array("id=1".utf8)]) == nil)
        #expect(PeerAnnouncement(txt: [Array("txtvers=1".utf8), Array("id=1".utf8)]) == nil)
        #expect(PeerAnnouncement(txt: [Array("txtvers=1".utf8), Array("ch=beta".utf8), Array("id=".utf8)]) == nil)
        #expect(PeerAnnouncement(txt: []) == nil)
        // A record without `=`, a repeated key (the first counts, RFC 6763 §6.4), a version that is not a number.
        let odd = try #require(PeerAnnouncement(txt: ["txtvers=1", "flag", "ch=a", "ch=b", "id=2", "v=soon"].map { Array($0.utf8) }))
        #expect(odd.channel == "a" && odd.version == nil)
        // Never past DNS's 255 bytes a string.
        #expect(PeerAnnouncement(channel: String(repeating: "c", count: 300), release: nil, version: nil, instance: "1").txt.allSatisfy { $0.count <= 255 })
    }

    @Test func theRecordsNameTheReleaseBeingFetchedBesideTheOneInForce() throws {
        let (held, next) = (String(repeating: "ab", count: 32), String(repeating: "cd", count: 32))
        let said = PeerAnnouncement(channel: "beta", release: held, version: 7, instance: "5eed", fetching: next)
        let text = said.txt.map { String(decoding: $0, as: UTF8.self) }
        #expect(text == ["txtvers=1", "ch=beta", "id=5eed", "rel=abababababababab,cdcdcdcdcdcdcdcd", "v=7"])
        #expect(PeerAnnouncement(txt: said.txt) == said)
        #expect(said.releases == PeerReleases(inForce: held, fetching: next))
        // Before a first install: only the one being fetched.
        let first = PeerAnnouncement(channel: "beta", release: nil, version: nil, instance: "5eed", fetching: next)
        #expect(first.txt.map { String(decoding: $0, as: UTF8.self) }.contains("rel=,cdcdcdcdcdcdcdcd"))
        #expect(PeerAnnouncement(txt: first.txt) == first && first.releases == PeerReleases(inForce: nil, fetching: next))
        // Fetching the release in force (a repair) names it once.
        #expect(PeerAnnouncement(channel: "beta", release: held, version: 7, instance: "5eed", fetching: held).txt.contains(Array("rel=abababababababab".utf8)))
        // Records of a device before this change (one release) read as before.
        let old = try #require(PeerAnnouncement(txt: ["txtvers=1", "ch=beta", "id=1", "rel=abababababababab"].map { Array($0.utf8) }))
        #expect(old.releases == PeerReleases(inForce: held, fetching: nil))
    }

    @Test func aSyncAsksThePeersNamingTheHeadsReleaseOrHoldingItsOwn() {
        let (old, new, other) = ("1111111111111111", "2222222222222222", "3333333333333333")
        let (fixed, holds, getting, same, elsewhere, fresh) = ("http://10.0.0.9:8701", "http://10.0.0.1:8701", "http://10.0.0.2:8701",
                                                              "http://10.0.0.3:8701", "http://10.0.0.4:8701", "http://10.0.0.5:8701")
        var peers = PeerSources(urls: [fixed, holds, getting, same, elsewhere, fresh])
        peers.announced = [
            holds: PeerReleases(inForce: new, fetching: nil),
            getting: PeerReleases(inForce: old, fetching: new),
            same: PeerReleases(inForce: old, fetching: nil),
            // A newer release the head does not name (or a liar's): it holds nothing this sync can use.
            elsewhere: PeerReleases(inForce: other, fetching: nil),
            fresh: PeerReleases(inForce: nil, fetching: nil),
        ]
        // Not fetching: nothing to weigh them by.
        #expect(peers.urls.filter(peers.asks) == peers.urls)
        // A release from `old` to `new`: the static peer always; those holding or fetching `new`, and
        // those on `old` too (about to fetch the same head); not one on another release, nor one holding none.
        peers.fetching.begin([], release: new + "ffff", holding: old + "eeee")
        #expect(peers.urls.filter(peers.asks) == [fixed, holds, getting, same])
        // A first install together: those holding nothing yet are about to fetch the same head.
        peers.fetching.begin([], release: new, holding: nil)
        #expect(peers.urls.filter(peers.asks) == [fixed, holds, getting, fresh])
        peers.fetching.end()
        #expect(peers.urls.filter(peers.asks) == peers.urls)
        // Static peers first, found ones after, none twice.
        #expect(PeerDirectory().joined(to: [fixed]).urls == [fixed])
    }

    @Test func anAvahiResolveServiceReplyIsRead() throws {
        // The reply as avahi-daemon 0.8 sends it (`iissssisqaayu`), marshalled here.
        var body = DBusWriter()
        body.int32(2)
        body.int32(0)
        body.string("cenarius-5eed")
        body.string("_cenarius._tcp")
        body.string("local")
        body.string("deva.local")
        body.int32(0)
        body.string("10.79.0.1")
        body.uint16(8701)
        body.byteArrays([Array("txtvers=1".utf8), Array("ch=default".utf8)])
        body.uint32(4)
        #expect(body.signature == "iissssisqaayu")
        let reply = DBusMessage(kind: .methodReturn, serial: 9, replySerial: 3, signature: body.signature, body: body.bytes)
        let resolved = try AvahiClient.resolved(reply)
        #expect(resolved.address == "10.79.0.1" && resolved.port == 8701 && resolved.flags == 4)
        #expect(resolved.txt == [Array("txtvers=1".utf8), Array("ch=default".utf8)])
        var cut = reply
        cut.body.removeLast(3)
        #expect(throws: AvahiClient.Failure.self) { try AvahiClient.resolved(cut) }
        // ItemNew: `iisssu`.
        var item = DBusWriter()
        item.int32(2)
        item.int32(0)
        item.string("cenarius-5eed")
        item.string("_cenarius._tcp")
        item.string("local")
        item.uint32(16)
        let signal = DBusMessage(kind: .signal, serial: 4, signature: item.signature, body: item.bytes)
        let parsed = try #require(AvahiClient.Item(signal))
        #expect(parsed.key == "2/0/cenarius-5eed" && parsed.flags & AvahiClient.ourOwn != 0)
    }
}
