/// D-Bus's marshalling (little-endian), for the few types the daemon's calls use: `y`, `q`,
/// `i`, `u`, `s`, `o`, `g` and `aay` (Avahi's TXT records). Offsets are from the body's start,
/// which the message puts on an 8-byte boundary, so alignment here is alignment on the wire.
package struct DBusWriter: Sendable {
    package private(set) var bytes: [UInt8] = []
    /// The body's signature, in the order values were written.
    package private(set) var signature = ""

    package init() {}

    package mutating func align(_ n: Int) { while bytes.count % n != 0 { bytes.append(0) } }

    package mutating func uint16(_ value: UInt16) {
        align(2)
        bytes += [UInt8(value & 0xFF), UInt8(value >> 8)]
        signature += "q"
    }

    package mutating func uint32(_ value: UInt32) {
        raw32(value)
        signature += "u"
    }

    package mutating func int32(_ value: Int32) {
        raw32(UInt32(bitPattern: value))
        signature += "i"
    }

    package mutating func string(_ text: String) {
        rawString(text)
        signature += "s"
    }

    package mutating func objectPath(_ path: String) {
        rawString(path)
        signature += "o"
    }

    package mutating func signatureValue(_ text: String) {
        rawSignature(text)
        signature += "g"
    }

    /// `aay`: the array's length counts the elements and the padding between them, not the
    /// padding before the first (none here: `ay` is 4-aligned, as the length is).
    package mutating func byteArrays(_ arrays: [[UInt8]]) {
        raw32(0)
        let lengthAt = bytes.count - 4
        let start = bytes.count
        for array in arrays {
            raw32(UInt32(array.count))
            bytes += array
        }
        let length = UInt32(bytes.count - start)
        bytes.replaceSubrange(lengthAt..<(lengthAt + 4), with: Self.le(length))
        signature += "aay"
    }

    mutating func raw32(_ value: UInt32) {
        align(4)
        bytes += Self.le(value)
    }

    mutating func rawString(_ text: String) {
        raw32(UInt32(text.utf8.count))
        bytes += text.utf8
        bytes.append(0)
    }

    mutating func rawSignature(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += text.utf8
        bytes.append(0)
    }

    mutating func rawByte(_ byte: UInt8) { bytes.append(byte) }
    mutating func append(_ more: [UInt8]) { bytes += more }

    static func le(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }
}

/// Reads values in order from a body (or a header), each aligned as D-Bus aligns it; nil for
/// anything that runs past the end, so a malformed message is dropped, never trusted.
package struct DBusReader: Sendable {
    let bytes: ArraySlice<UInt8>
    package var offset = 0

    package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    package var atEnd: Bool { offset >= bytes.count }

    mutating func align(_ n: Int) { offset = (offset + n - 1) / n * n }

    package mutating func byte() -> UInt8? {
        guard offset >= 0, offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[bytes.startIndex + offset]
    }

    package mutating func uint16() -> UInt16? {
        align(2)
        guard offset + 2 <= bytes.count else { return nil }
        let i = bytes.startIndex + offset
        offset += 2
        return UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
    }

    package mutating func uint32() -> UInt32? {
        align(4)
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        let i = bytes.startIndex + offset
        offset += 4
        return UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
    }

    package mutating func int32() -> Int32? { uint32().map { Int32(bitPattern: $0) } }

    /// `s` or `o`.
    package mutating func string() -> String? {
        guard let count = uint32().map(Int.init), count < bytes.count - offset else { return nil }
        let start = bytes.startIndex + offset
        offset += count + 1
        return String(decoding: bytes[start..<(start + count)], as: UTF8.self)
    }

    package mutating func signature() -> String? {
        guard let count = byte().map(Int.init), count < bytes.count - offset else { return nil }
        let start = bytes.startIndex + offset
        offset += count + 1
        return String(decoding: bytes[start..<(start + count)], as: UTF8.self)
    }

    package mutating func byteArrays() -> [[UInt8]]? {
        guard let length = uint32().map(Int.init), length <= bytes.count - offset else { return nil }
        let end = offset + length
        var arrays: [[UInt8]] = []
        while offset < end {
            guard let count = uint32().map(Int.init), count <= end - offset else { return nil }
            let start = bytes.startIndex + offset
            arrays.append(Array(bytes[start..<(start + count)]))
            offset += count
        }
        return offset == end ? arrays : nil
    }
}
