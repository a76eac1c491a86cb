/// A uri as the contract defines it: a relative, `/`-separated UTF-8 path that cannot
/// climb out of the folder it is joined to.
package struct URIPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let value: String

    package static let maxBytes = 1024

    /// Validates a uri exactly as written in a route table.
    package init(validating raw: String) throws(CenariusError) {
        var raw = raw
        if let reason = raw.withUTF8({ URIPath.problem(in: $0) }) {
            throw .integrity("invalid uri \(URIPath.quoted(raw)): \(reason)")
        }
        value = raw
    }

    /// Normalises a lookup: drops `?query` and `#fragment`, decodes `%XX` once, then
    /// applies the table rules. Errors are `notFound`: a uri that cannot be valid is not
    /// in any table.
    package init(lookup raw: String) throws(CenariusError) {
        var bytes = Array(raw.utf8)
        if let cut = bytes.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            bytes.removeSubrange(cut...)
        }
        guard let decoded = URIPath.percentDecoded(bytes) else {
            throw .notFound("invalid uri \(URIPath.quoted(raw)): malformed %-escape")
        }
        guard let text = String(validating: decoded, as: UTF8.self) else {
            throw .notFound("invalid uri \(URIPath.quoted(raw)): not UTF-8")
        }
        if let reason = decoded.withUnsafeBufferPointer({ URIPath.problem(in: $0) }) {
            throw .notFound("invalid uri \(URIPath.quoted(raw)): \(reason)")
        }
        value = text
    }

    package var description: String { value }

    // Uris are compared as bytes (contract, "URI rules"): Swift's String equality is canonical
    // equivalence, under which the NFC and NFD forms of a name are equal, while a file system
    // and an HTTP server hold them as two names.
    package static func == (lhs: URIPath, rhs: URIPath) -> Bool { lhs.value.utf8.elementsEqual(rhs.value.utf8) }
    package func hash(into hasher: inout Hasher) { URIPath.hashBytes(value.utf8, into: &hasher) }
    package static func < (lhs: URIPath, rhs: URIPath) -> Bool { lhs.value.utf8.lexicographicallyPrecedes(rhs.value.utf8) }

    static func hashBytes(_ bytes: some Collection<UInt8>, into hasher: inout Hasher) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil { for byte in bytes { hasher.combine(byte) } }
        hasher.combine(bytes.count)
    }

    /// The longest name a file system holds in one folder entry (ext4, xfs, btrfs, tmpfs).
    package static let maxSegmentBytes = 255

    /// The reason a byte sequence is not a valid uri, or nil when it is.
    static func problem(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if bytes.isEmpty { return "empty" }
        if bytes.count > maxBytes { return "longer than \(maxBytes) bytes" }
        if bytes.first == UInt8(ascii: "/") { return "leading '/'" }
        var segmentLength = 0
        var segmentDots = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "/"):
                if segmentLength == 0 { return "empty segment" }
                if segmentLength > maxSegmentBytes { return "a segment longer than \(maxSegmentBytes) bytes (no file system holds such a name)" }
                if segmentLength == segmentDots && segmentDots <= 2 { return "'.' or '..' segment" }
                segmentLength = 0
                segmentDots = 0
                continue
            case UInt8(ascii: "\\"): return "backslash"
            case 0..<0x20, 0x7F: return "control character"
            case UInt8(ascii: "."): segmentDots += 1
            default: break
            }
            segmentLength += 1
        }
        if segmentLength == 0 { return "empty segment" }
        if segmentLength > maxSegmentBytes { return "a segment longer than \(maxSegmentBytes) bytes (no file system holds such a name)" }
        if segmentLength == segmentDots && segmentDots <= 2 { return "'.' or '..' segment" }
        // UTF-8 validity is the callers' part: a Swift String is valid by construction, and
        // lookups validate the decoded bytes before calling this.
        return nil
    }

    /// `%XX` decoded once (a query parameter's value); nil when malformed or not UTF-8.
    package static func percentDecoded(_ text: Substring) -> String? {
        percentDecoded(Array(text.utf8)).flatMap { String(validating: $0, as: UTF8.self) }
    }

    package static func percentDecoded(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.contains(UInt8(ascii: "%")) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else {
                    return nil
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func quoted(_ raw: String) -> String {
        let shown = raw.count > 80 ? String(raw.prefix(80)) + "…" : raw
        return "\"" + shown.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined() + "\""
    }
}
