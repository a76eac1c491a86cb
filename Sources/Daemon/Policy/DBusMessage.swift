/// The little of the D-Bus wire protocol (little-endian, version 1) the daemon's calls need: a
/// method call out (its body marshalled by DBusWriter), and replies, errors and signals back
/// with the header fields that route them. Hand-written: libdbus or sd-bus would be a run-time
/// dependency of every device for a few calls a device without NetworkManager or Avahi never
/// makes (docs/decisions.md).
package struct DBusMessage: Sendable, Equatable {
    package enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    package var kind: Kind
    package var serial: UInt32
    package var replySerial: UInt32?
    package var path = ""
    package var interface = ""
    package var member = ""
    package var errorName = ""
    package var sender = ""
    package var signature = ""
    package var body: [UInt8] = []

    package init(kind: Kind, serial: UInt32, replySerial: UInt32? = nil, signature: String = "", body: [UInt8] = []) {
        (self.kind, self.serial, self.replySerial, self.signature, self.body) = (kind, serial, replySerial, signature, body)
    }

    /// A method call to `destination`'s `path`, `interface.member(strings...)`.
    package static func call(serial: UInt32, destination: String, path: String, interface: String, member: String, strings: [String]) -> [UInt8] {
        var body = DBusWriter()
        for string in strings { body.string(string) }
        return call(serial: serial, destination: destination, path: path, interface: interface, member: member, body: body)
    }

    /// A method call with a body of any of DBusWriter's types.
    package static func call(serial: UInt32, destination: String, path: String, interface: String, member: String, body: DBusWriter) -> [UInt8] {
        var fields = DBusWriter()
        func field(_ code: UInt8, _ signature: String, _ value: String) {
            fields.align(8)
            fields.rawByte(code)
            fields.rawSignature(signature)
            if signature == "g" { fields.rawSignature(value) } else { fields.rawString(value) }
        }
        field(1, "o", path)
        field(2, "s", interface)
        field(3, "s", member)
        field(6, "s", destination)
        if !body.signature.isEmpty { field(8, "g", body.signature) }
        var message = DBusWriter()
        message.append([UInt8(ascii: "l"), Kind.methodCall.rawValue, 0, 1])
        message.raw32(UInt32(body.bytes.count))
        message.raw32(serial)
        message.raw32(UInt32(fields.bytes.count))
        // The fields were laid out from offset 0; in the message they start at 16, also 8-aligned.
        message.append(fields.bytes)
        message.align(8)
        return message.bytes + body.bytes
    }

    /// The length of the message at the start of `bytes` once its fixed header is there (nil: not yet, or not one).
    package static func length(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 16, bytes.first == UInt8(ascii: "l") else { return nil }
        var reader = DBusReader(bytes.prefix(16))
        reader.offset = 4
        guard let body = reader.uint32(), reader.uint32() != nil, let fields = reader.uint32(), body < 1 << 20, fields < 1 << 20 else { return nil }
        return (16 + Int(fields) + 7) / 8 * 8 + Int(body)
    }

    /// One whole message; nil for anything malformed.
    package static func parse(_ bytes: ArraySlice<UInt8>) -> DBusMessage? {
        guard let total = length(bytes), bytes.count >= total else { return nil }
        var reader = DBusReader(bytes.prefix(total))
        reader.offset = 1
        guard let kind = reader.byte().flatMap(Kind.init(rawValue:)) else { return nil }
        reader.offset = 4
        guard let bodyLength = reader.uint32(), let serial = reader.uint32(), let fieldsLength = reader.uint32() else { return nil }
        var message = DBusMessage(kind: kind, serial: serial)
        let fieldsEnd = 16 + Int(fieldsLength)
        while reader.offset < fieldsEnd {
            reader.align(8)
            if reader.offset >= fieldsEnd { break }
            guard let code = reader.byte(), let signature = reader.signature() else { return nil }
            switch signature {
            case "u":
                guard let value = reader.uint32() else { return nil }
                if code == 5 { message.replySerial = value }
            case "s", "o":
                guard let value = reader.string() else { return nil }
                switch code {
                case 1: message.path = value
                case 2: message.interface = value
                case 3: message.member = value
                case 4: message.errorName = value
                case 7: message.sender = value
                default: break
                }
            case "g":
                guard let value = reader.signature() else { return nil }
                if code == 8 { message.signature = value }
            default:
                return nil
            }
        }
        let bodyStart = bytes.startIndex + (fieldsEnd + 7) / 8 * 8
        message.body = Array(bytes[bodyStart..<(bodyStart + Int(bodyLength))])
        return message
    }

    /// A reader of the body, from its start.
    package var values: DBusReader { DBusReader(body[...]) }

    /// The body as one variant holding a `u` (what Properties.Get answers for a uint32 property).
    package var variantUInt32: UInt32? {
        guard signature == "v" else { return nil }
        var reader = values
        guard reader.signature() == "u" else { return nil }
        return reader.uint32()
    }
}
