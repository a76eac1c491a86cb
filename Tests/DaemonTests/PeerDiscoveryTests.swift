import Daemon
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

    @Test func aSyncAsksThePeersHoldingTheNewestReleaseNotOlderThanItsOwn() {
        let a = PeerDirectory.Found(url: "http://10.0.0.1:8701", version: 5)
        let b = PeerDirectory.Found(url: "http://10.0.0.2:8701", version: 7)
        let c = PeerDirectory.Found(url: "http://10.0.0.3:8701", version: 7)
        let fresh = PeerDirectory.Found(url: "http://10.0.0.4:8701", version: nil)
        // On 5, with peers on 7: those on 7 hold what comes next.
        #expect(PeerDirectory.chosen([a, c, b, fresh], mine: 5) == [b.url, c.url])
        // Nothing yet: the newest any peer holds.
        #expect(PeerDirectory.chosen([a, fresh], mine: nil) == [a.url])
        // Peers all older than this device hold nothing it lacks.
        #expect(PeerDirectory.chosen([a], mine: 6).isEmpty)
        // On the newest already: those on it (a repair, a file gone from the store).
        #expect(PeerDirectory.chosen([a, b], mine: 7) == [b.url])
        // A first install among devices that hold nothing yet: each other.
        #expect(PeerDirectory.chosen([fresh], mine: nil) == [fresh.url])
        #expect(PeerDirectory.chosen([], mine: nil).isEmpty)
        // The same URL seen on two interfaces is asked once.
        #expect(PeerDirectory.chosen([b, b], mine: nil) == [b.url])
        // Static peers first, found ones after, none twice.
        #expect(PeerDirectory().joined(to: ["http://10.0.0.9:8701"]) == ["http://10.0.0.9:8701"])
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
