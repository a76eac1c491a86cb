import FoundationEssentials
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// One daemon event as a CloudEvents 1.0 JSON object (the structured mode of the JSON format):
/// what `--report-url` posts, and what its queue keeps on disk, byte for byte, so that a retry
/// and a restart send the same `id`.
struct CloudEvent: Encodable, Sendable {
    let specversion = "1.0"
    /// A UUID drawn when the event is queued: unique per source, stable across retries.
    let id: String
    /// `urn:cenariusd:device:<hash>`: the device, by the same hash its `Cenarius-Report` carries.
    let source: String
    /// `dev.cenariusd.<event>`: `dev.cenariusd.committed`, `dev.cenariusd.rolled-back`, ...
    let type: String
    /// RFC 3339, UTC, milliseconds.
    let time: String
    let datacontenttype = "application/json"
    /// The same fields the event stream's `data:` carries (`generation`, `time`, ...).
    let data: [String: EventField]

    /// The events a report carries: those that tell how a release is going on this device.
    static let reported: Set<String> = ["committed", "confirmed", "rolled-back", "sync-failed", "deferred", "held", "released"]
    static let typePrefix = "dev.cenariusd."
    static let batchContentType = "application/cloudevents-batch+json"

    init(id: String = UUID().uuidString.lowercased(), source: String, name: String, data: [String: EventField]) {
        self.id = id
        self.source = source
        type = Self.typePrefix + name
        let seconds: Double = if case .double(let time) = data["time"] { time } else { FileSystem.now() }
        time = Self.rfc3339(seconds)
        self.data = data
    }

    static func source(deviceHash: String) -> String { "urn:cenariusd:device:" + deviceHash }

    /// One line of JSON (keys sorted): a queue entry.
    func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A batch body: the queued objects as a JSON array (`application/cloudevents-batch+json`).
    static func batch(_ lines: some Collection<String>) -> [UInt8] {
        Array(("[" + lines.joined(separator: ",") + "]").utf8)
    }

    static func rfc3339(_ seconds: Double) -> String {
        // To the nearest millisecond: a fraction such as .999 is not exact in binary.
        let total = Int((seconds * 1000).rounded())
        var whole = time_t(total / 1000)
        let millis = total % 1000
        var parts = tm()
        gmtime_r(&whole, &parts)
        func pad(_ n: Int, _ width: Int) -> String {
            let text = String(n)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))"
            + "T\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2)).\(pad(millis, 3))Z"
    }
}
