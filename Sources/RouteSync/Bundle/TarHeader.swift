/// The POSIX tar blocks an offline bundle file is made of (docs/bundles.md): ustar headers
/// (POSIX.1-1988) and, for a name longer than ustar's 100 bytes (a patch's name holds two
/// SHA-256s), a pax extended header (POSIX.1-2001, typeflag `x`) with its `path` record. GNU tar,
/// bsdtar, busybox tar and Python's tarfile read both. Pure: bytes in, bytes out.
package enum TarHeader {
    package static let block = 512
    /// Eleven octal digits: the most a ustar size field says (8 GiB - 1).
    package static let maxSize: Int64 = 0o77777777777

    /// What a header says, once read.
    package enum Entry: Equatable, Sendable {
        /// A regular file of `size` bytes named `name` (pax's `path` applied by the reader).
        case file(name: String, size: Int64)
        /// A folder: nothing to read.
        case folder(name: String)
        /// A pax extended header of `size` bytes for the next entry (`x`), or for all (`g`).
        case pax(size: Int64, global: Bool)
        /// The end of the archive: a block of zeros.
        case end
    }

    /// The blocks that announce a regular file of `size` bytes: a pax header first when the name
    /// does not fit ustar's fields. `mtime` is the same for every member (a bundle's bytes depend
    /// on what it holds, not on when each object was read).
    package static func file(_ name: String, size: Int64, mtime: Int64) -> [UInt8] {
        var out: [UInt8] = []
        let bytes = Array(name.utf8)
        if bytes.count > 100 {
            let record = paxRecord("path", name)
            out += header(name: "PaxHeaders/" + String(decoding: bytes.suffix(80), as: UTF8.self), size: Int64(record.count), mtime: mtime, type: UInt8(ascii: "x"))
            out += record + padding(Int64(record.count))
        }
        out += header(name: String(decoding: bytes.prefix(100), as: UTF8.self), size: size, mtime: mtime, type: UInt8(ascii: "0"))
        return out
    }

    /// The zeros after a member's data, up to the next block.
    package static func padding(_ size: Int64) -> [UInt8] {
        let rest = Int(size % Int64(block))
        return rest == 0 ? [] : [UInt8](repeating: 0, count: block - rest)
    }

    /// Two blocks of zeros: the end of the archive.
    package static var end: [UInt8] { [UInt8](repeating: 0, count: 2 * block) }

    /// `"<length> <key>=<value>\n"`, the length counting itself.
    static func paxRecord(_ key: String, _ value: String) -> [UInt8] {
        let body = " \(key)=\(value)\n"
        var length = body.utf8.count + 1
        while String(length).utf8.count + body.utf8.count > length { length += 1 }
        return Array((String(length) + body).utf8)
    }

    static func header(name: String, size: Int64, mtime: Int64, type: UInt8) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: Self.block)
        func put(_ text: String, at offset: Int, width: Int) {
            for (i, byte) in text.utf8.prefix(width).enumerated() { block[offset + i] = byte }
        }
        func octal(_ value: Int64, at offset: Int, width: Int) {
            let digits = String(value, radix: 8)
            put(String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits, at: offset, width: width - 1)
        }
        put(name, at: 0, width: 100)
        octal(0o644, at: 100, width: 8)
        octal(0, at: 108, width: 8)
        octal(0, at: 116, width: 8)
        octal(size, at: 124, width: 12)
        octal(mtime, at: 136, width: 12)
        block[156] = type
        put("ustar", at: 257, width: 6)
        put("00", at: 263, width: 2)
        put("root", at: 265, width: 32)
        put("root", at: 297, width: 32)
        for i in 148..<156 { block[i] = UInt8(ascii: " ") }
        let sum = block.reduce(0) { $0 + Int($1) }
        octal(Int64(sum), at: 148, width: 7)
        block[155] = UInt8(ascii: " ")
        return block
    }

    /// Reads one header block. A checksum that does not add up, a size that is not octal, a
    /// link, a device or a FIFO: the archive is refused (exit 4), since a bundle holds files only.
    package static func parse(_ block: ArraySlice<UInt8>, at offset: Int64) throws(CenariusError) -> Entry {
        guard block.count == Self.block else { throw .integrity("truncated at byte \(offset): a tar header is \(Self.block) bytes") }
        let base = block.startIndex
        if block.allSatisfy({ $0 == 0 }) { return .end }
        func field(_ start: Int, _ width: Int) -> ArraySlice<UInt8> {
            let slice = block[(base + start)..<(base + start + width)]
            return slice.prefix { $0 != 0 }
        }
        func number(_ start: Int, _ width: Int) -> Int64? {
            let text = field(start, width).filter { $0 != UInt8(ascii: " ") }
            guard !text.isEmpty, text.count <= 11, text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) }) else { return text.isEmpty ? 0 : nil }
            return Int64(String(decoding: text, as: UTF8.self), radix: 8)
        }
        var sum = 0
        for (i, byte) in block.enumerated() { sum += (148..<156).contains(i) ? Int(UInt8(ascii: " ")) : Int(byte) }
        guard let recorded = number(148, 8), Int64(sum) == recorded else { throw .integrity("damaged at byte \(offset): a tar header's checksum does not add up") }
        guard field(257, 5).elementsEqual("ustar".utf8) else { throw .integrity("not a POSIX tar at byte \(offset) (no ustar magic)") }
        guard let size = number(124, 12) else { throw .integrity("damaged at byte \(offset): a tar header's size is not octal") }
        var name = String(decoding: field(0, 100), as: UTF8.self)
        let prefix = field(345, 155)
        if !prefix.isEmpty { name = String(decoding: prefix, as: UTF8.self) + "/" + name }
        switch block[base + 156] {
        case 0, UInt8(ascii: "0"), UInt8(ascii: "7"): return .file(name: name, size: size)
        case UInt8(ascii: "5"): return .folder(name: name)
        case UInt8(ascii: "x"): return .pax(size: size, global: false)
        case UInt8(ascii: "g"): return .pax(size: size, global: true)
        case let type:
            let kind = [UInt8(ascii: "1"): "a hard link", UInt8(ascii: "2"): "a symbolic link", UInt8(ascii: "3"): "a character device",
                        UInt8(ascii: "4"): "a block device", UInt8(ascii: "6"): "a FIFO"][type] ?? "an entry of type \(type)"
            throw .integrity("\(name) at byte \(offset) is \(kind): a bundle holds regular files only")
        }
    }

    /// The `path` and `size` records of a pax extended header.
    package static func paxValues(_ data: [UInt8], at offset: Int64) throws(CenariusError) -> (path: String?, size: Int64?) {
        var path: String?, size: Int64?
        var rest = data[...]
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: UInt8(ascii: " ")), let length = Int(String(decoding: rest[rest.startIndex..<space], as: UTF8.self)),
                  length > 0, length <= rest.count, rest[rest.startIndex + length - 1] == UInt8(ascii: "\n") else {
                throw .integrity("damaged at byte \(offset): a pax header's record does not read")
            }
            let record = rest[(space + 1)..<(rest.startIndex + length - 1)]
            if let equals = record.firstIndex(of: UInt8(ascii: "=")) {
                let key = String(decoding: record[record.startIndex..<equals], as: UTF8.self)
                let value = String(decoding: record[(equals + 1)...], as: UTF8.self)
                if key == "path" { path = value }
                if key == "size" { size = Int64(value) }
            }
            rest = rest.dropFirst(length)
        }
        return (path, size)
    }
}
