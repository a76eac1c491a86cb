import Foundation
import Testing
@testable import Daemon

/// The `--report-url` queue and its CloudEvents encoding, without a disk or a network.
@Suite struct ReportQueueTests {
    static func line(_ n: Int, pad: Int = 0) -> String {
        "{\"id\":\"e\(n)\",\"pad\":\"\(String(repeating: "x", count: pad))\"}"
    }

    @Test func theOldestGoFirstPastTheEventBoundAndAreCounted() {
        var queue = ReportQueue(maxEvents: 3, maxBytes: 1 << 20)
        for n in 0..<5 { queue.append(Self.line(n)) }
        #expect(queue.entries.map(\.line) == [2, 3, 4].map { Self.line($0) })
        #expect(queue.dropped == 2)
    }

    @Test func theByteBoundDropsTheOldestToo() {
        var queue = ReportQueue(maxEvents: 1000, maxBytes: 250)
        for n in 0..<5 { #expect(queue.append(Self.line(n, pad: 90)) == (n < 2 ? 0 : 1)) }
        #expect(queue.count == 2)
        #expect(queue.bytes <= 250)
        #expect(queue.dropped == 3)
        // One event larger than the whole bound still goes, alone.
        queue.append(Self.line(9, pad: 1000))
        #expect(queue.entries.map(\.line) == [Self.line(9, pad: 1000)])
    }

    @Test func batchesAreThePrefixWithinTheirBounds() throws {
        var queue = ReportQueue()
        for n in 0..<250 { queue.append(Self.line(n)) }
        let first = try #require(queue.batch())
        #expect(first.lines.count == 100)
        #expect(first.lines.first == Self.line(0))
        let small = try #require(queue.batch(maxEvents: 100, maxBytes: 3 * (Self.line(0).utf8.count + 1)))
        #expect(small.lines.count == 3)
        queue.acknowledge(through: first.last)
        #expect(queue.count == 150)
        #expect(queue.batch()?.lines.first == Self.line(100))
    }

    /// A batch in flight while newer events arrive and older ones are dropped: acknowledging it
    /// removes what it sent and still queued, nothing newer.
    @Test func acknowledgingABatchSparesEventsQueuedWhileItWasInFlight() throws {
        var queue = ReportQueue(maxEvents: 4, maxBytes: 1 << 20)
        for n in 0..<3 { queue.append(Self.line(n)) }
        let batch = try #require(queue.batch())
        for n in 3..<6 { queue.append(Self.line(n)) }   // drops 0 and 1
        queue.acknowledge(through: batch.last)
        #expect(queue.entries.map(\.line) == [3, 4, 5].map { Self.line($0) })
        #expect(queue.bytes == [3, 4, 5].map { Self.line($0).utf8.count + 1 }.reduce(0, +))
    }

    @Test func theFileKeepsTheEventsAndTheDroppedCount() {
        var queue = ReportQueue(maxEvents: 2, maxBytes: 1 << 20)
        for n in 0..<4 { queue.append(Self.line(n)) }
        let read = ReportQueue.parse(queue.serialized(), maxEvents: 2)
        #expect(read.entries.map(\.line) == queue.entries.map(\.line))
        #expect(read.dropped == 2)
        #expect(ReportQueue.parse([]).isEmpty)
    }

    @Test func aDamagedLineIsSkippedAndCountedTheRestKept() {
        let text = "{\"dropped\":1}\n\(Self.line(0))\n{\"id\":\"cut\n\(Self.line(1))\n"
        let read = ReportQueue.parse(Array(text.utf8))
        #expect(read.entries.map(\.line) == [Self.line(0), Self.line(1)])
        #expect(read.dropped == 2)
    }

    @Test func aBatchIsAJSONArrayOfCloudEvents() throws {
        let event = CloudEvent(id: "7f1c", source: CloudEvent.source(deviceHash: "3f2a9c0d"), name: "rolled-back",
                               data: ["generation": .int(4), "time": .double(1_795_000_000.25), "reason": .string("health")])
        let body = CloudEvent.batch([event.line(), event.line()])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]])
        #expect(array.count == 2)
        let object = array[0]
        #expect(object["specversion"] as? String == "1.0")
        #expect(object["id"] as? String == "7f1c")
        #expect(object["source"] as? String == "urn:cenariusd:device:3f2a9c0d")
        #expect(object["type"] as? String == "dev.cenariusd.rolled-back")
        #expect(object["time"] as? String == "2026-11-18T11:06:40.250Z")
        #expect(object["datacontenttype"] as? String == "application/json")
        let data = try #require(object["data"] as? [String: Any])
        #expect(data["generation"] as? Int == 4)
        #expect(data["reason"] as? String == "health")
        #expect(!event.line().contains("\n"))
    }

    @Test func eachEventDrawsItsOwnID() {
        let a = CloudEvent(source: "s", name: "committed", data: [:])
        let b = CloudEvent(source: "s", name: "committed", data: [:])
        #expect(a.id != b.id)
        #expect(a.id.count == 36)
    }

    @Test(arguments: [(0.0, "1970-01-01T00:00:00.000Z"), (951_782_400.999, "2000-02-29T00:00:00.999Z")])
    func timesAreRFC3339InUTC(_ seconds: Double, _ text: String) {
        #expect(CloudEvent.rfc3339(seconds) == text)
    }
}
