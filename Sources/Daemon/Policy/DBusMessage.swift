/// The little of the D-Bus wire protocol (little-endian, version 1) a property read needs: a
/// method call with string arguments out, and the header fields and a `u` in a variant back.
/// Hand-written: libdbus or sd-bus would be a run-time dependency of every device for one call
/// a device without NetworkManager never makes (docs/decisions.md).
package struct DBusMessage: Sendable, Equatable {
    package enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    package var kind: Kind
    package var serial: UInt32
    package var replySerial: UInt32?
    package var signature = ""
    package var body: [UInt8] = []

    /// A method call to `destination`'s `path`, `interface.member(strings...)`.
    package static func call(serial: UInt32, destination: String, path: String, interface: String, member: String, strings: [String]) -> [UInt8] {
        var body = Writer()
        for string in strings { body.string(string) }
        var fields = Writer()
        func field(_ code: UInt8, _ signature: String, _ value: String) {
            fields.align(8)
            fields.bytes.append(code)
            fields.signature(signature)
            if signature == "g" { fields.signature(value) } else { fields.string(value) }
        }
        field(1, "o", path)
        field(2, "s", interface)
        field(3, "s", member)
        field(6, "s", destination)
        if !strings.isEmpty { field(8, "g", String(repeating: "s", count: strings.count)) }
        var message = Writer()
        message.bytes = [UInt8(ascii: "l"), Kind.methodCall.rawValue, 0, 1]
        message.uint32(UInt32(body.bytes.count))
        message.uint32(serial)
        message.uint32(UInt32(fields.bytes.count))
        // The fields were laid out from offset 0; in the message they start at 16, also 8-aligned.
        message.bytes += fields.bytes
        message.align(8)
        return message.bytes + body.bytes
    }

    /// The length of the message at the start of `bytes` once its fixed header is there (nil: not yet, or not one).
    package static func length(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 16, bytes.first == UInt8(ascii: "l") else { return nil }
        let reader = Reader(bytes)
        guard let body = reader.uint32(at: 4), let fields = reader.uint32(at: 12), body < 1 << 20, fields < 1 << 20 else { return nil }
        return (16 + Int(fields) + 7) / 8 * 8 + Int(body)
    }

    /// One whole message; nil for anything malformed.
    package static func parse(_ bytes: ArraySlice<UInt8>) -> DBusMessage? {
        guard let total = length(bytes), bytes.count >= total else { return nil }
        let reader = Reader(bytes.prefix(total))
        let start = bytes.startIndex
        guard let kind = Kind(rawValue: bytes[start + 1]), let bodyLength = reader.uint32(at: 4), let serial = reader.uint32(at: 8),
              let fieldsLength = reader.uint32(at: 12) else { return nil }
        var message = DBusMessage(kind: kind, serial: serial)
        var offset = 16
        let fieldsEnd = 16 + Int(fieldsLength)
        while offset < fieldsEnd {
            offset = (offset + 7) / 8 * 8
            if offset >= fieldsEnd { break }
            guard let code = reader.byte(at: offset), let (signature, next) = reader.signature(at: offset + 1) else { return nil }
            offset = next
            switch signature {
            case "u":
                offset = (offset + 3) / 4 * 4
                guard let value = reader.uint32(at: offset) else { return nil }
                if code == 5 { message.replySerial = value }
                offset += 4
            case "s", "o":
                guard let (_, next) = reader.string(at: offset) else { return nil }
                offset = next
            case "g":
                guard let (value, next) = reader.signature(at: offset) else { return nil }
                if code == 8 { message.signature = value }
                offset = next
            default:
                return nil
            }
        }
        let bodyStart = (fieldsEnd + 7) / 8 * 8
        message.body = Array(bytes[(start + bodyStart)..<(start + bodyStart + Int(bodyLength))])
        return message
    }

    /// The body as one variant holding a `u` (what Properties.Get answers for a uint32 property).
    package var variantUInt32: UInt32? {
        guard signature == "v" else { return nil }
        let reader = Reader(body[...])
        guard let (inner, next) = reader.signature(at: 0), inner == "u" else { return nil }
        return reader.uint32(at: (next + 3) / 4 * 4)
    }

    private struct Writer {
        var bytes: [UInt8] = []
        mutating func align(_ n: Int) { while bytes.count % n != 0 { bytes.append(0) } }
        mutating func uint32(_ value: UInt32) {
            align(4)
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
        mutating func string(_ text: String) {
            uint32(UInt32(text.utf8.count))
            bytes += text.utf8
            bytes.append(0)
        }
        mutating func signature(_ text: String) {
            bytes.append(UInt8(text.utf8.count))
            bytes += text.utf8
            bytes.append(0)
        }
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
        func byte(at offset: Int) -> UInt8? { offset >= 0 && offset < bytes.count ? bytes[bytes.startIndex + offset] : nil }
        func uint32(at offset: Int) -> UInt32? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            let i = bytes.startIndex + offset
            return UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        }
        func string(at offset: Int) -> (String, Int)? {
            let aligned = (offset + 3) / 4 * 4
            guard let count = uint32(at: aligned), Int(count) < bytes.count, aligned + 4 + Int(count) < bytes.count else { return nil }
            let start = bytes.startIndex + aligned + 4
            return (String(decoding: bytes[start..<(start + Int(count))], as: UTF8.self), aligned + 4 + Int(count) + 1)
        }
        func signature(at offset: Int) -> (String, Int)? {
            guard let count = byte(at: offset), offset + 1 + Int(count) < bytes.count else { return nil }
            let start = bytes.startIndex + offset + 1
            return (String(decoding: bytes[start..<(start + Int(count))], as: UTF8.self), offset + 1 + Int(count) + 1)
        }
    }
}
