package import RouteSync

/// The result of `fleet --sql`'s query, read back (`fleet --counts FILE`): per release and per `why`
/// code, as a warehouse wrote it. CSV with a header row (Athena's, DuckDB's and ClickHouse's
/// `CSVWithNames`, quoted or not), a JSON array of objects, or JSON lines (DuckDB's `COPY … (FORMAT
/// json)`, ClickHouse's `JSONEachRow`, whose 64-bit counts are quoted strings).
package struct FleetCounts: Sendable, Equatable {
    package var releases: [FleetTally.Release] = []
    package var why: [String: Int] = [:]

    /// Devices: each is on one release.
    package var devices: Int { releases.reduce(0) { $0 + $1.seen } }

    static let columns = ["kind", "name", "devices", "confirmed", "trial", "deferred", "held", "failed", "peer_bytes", "origin_bytes"]

    /// Bytes from LAN peers and from the origin over every release (the fleet's uplink saving).
    package var bytes: PeerBytes {
        releases.reduce(PeerBytes(peer: 0, origin: 0)) {
            PeerBytes(peer: FleetTally.sum($0.peer, $1.peerBytes), origin: FleetTally.sum($0.origin, $1.originBytes))
        }
    }

    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> FleetCounts {
        let text = String(decoding: bytes, as: UTF8.self)
        let start = text.utf8.first { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\t") }
        var rows: [[String: String]] = []
        if start == UInt8(ascii: "[") || start == UInt8(ascii: "{") {
            let objects: [JSONValue]
            if start == UInt8(ascii: "["), case .array(let items) = try JSONValue.parse(bytes, source: source) {
                objects = items
            } else {
                objects = try text.split(whereSeparator: \.isNewline).map { line throws(CenariusError) in try JSONValue.parse(Array(line.utf8), source: source) }
            }
            for object in objects {
                guard case .object(let members) = object else { throw .usage("\(source): a row is not a JSON object") }
                rows.append(members.compactMapValues { value in
                    switch value {
                    case .string(let s), .number(let s): s
                    default: nil
                    }
                })
            }
        } else {
            let lines = text.split(whereSeparator: \.isNewline).map(csvFields)
            guard let header = lines.first else { throw .usage("\(source) is empty: no header row") }
            rows = lines.dropFirst().map { Dictionary(zip(header, $0), uniquingKeysWith: { first, _ in first }) }
        }
        var counts = FleetCounts()
        for (index, row) in rows.enumerated() {
            func number(_ key: String) throws(CenariusError) -> Int {
                guard let text = row[key], let value = Int(text) ?? Double(text).flatMap({ Int(exactly: $0) }), value >= 0 else {
                    throw .usage("\(source), row \(index + 1): \(key) is not a count (columns: \(columns.joined(separator: ", ")))")
                }
                return value
            }
            guard let kind = row["kind"], let name = row["name"] else {
                throw .usage("\(source), row \(index + 1): no kind or name (columns: \(columns.joined(separator: ", ")); the result of fleet --sql)")
            }
            switch kind {
            case "release":
                var release = FleetTally.Release(name: name)
                (release.confirmed, release.trial, release.deferred, release.held, release.failed) =
                    (try number("confirmed"), try number("trial"), try number("deferred"), try number("held"), try number("failed"))
                // A result of the query before it summed bytes has no such columns: no bytes, as then.
                if row["peer_bytes"] != nil || row["origin_bytes"] != nil {
                    (release.peerBytes, release.originBytes) = (Int64(try number("peer_bytes")), Int64(try number("origin_bytes")))
                }
                counts.releases.append(release)
            case "why":
                counts.why[name, default: 0] += try number("devices")
            default:
                throw .usage("\(source), row \(index + 1): kind \(JSONText.quoted(kind)) is neither release nor why")
            }
        }
        counts.releases.sort { ($0.tried, $0.name) > ($1.tried, $1.name) }
        return counts
    }

    /// One CSV row's fields: `"…"` quoted (a `""` inside is a quote) or bare.
    private static func csvFields(_ line: Substring) -> [String] {
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var bytes = Array(line.utf8)[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.endIndex, bytes[index + 1] == UInt8(ascii: "\"") { field.append(byte); index += 1 } else { quoted = false }
                } else {
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll()
            } else {
                field.append(byte)
            }
            index += 1
        }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }
}
