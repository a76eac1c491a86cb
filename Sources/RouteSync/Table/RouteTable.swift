/// One line of a route table.
package struct RouteEntry: Hashable, Sendable {
    package let uri: URIPath
    package let hash: ContentHash
    /// Optional, written by `cenariusd routes`; lets a sync check free space and show progress up front.
    package let size: Int64?

    package init(uri: URIPath, hash: ContentHash, size: Int64? = nil) {
        self.uri = uri
        self.hash = hash
        self.size = size
    }
}

/// A parsed and validated `Routes.json`: every uri valid, none listed twice with different hashes.
package struct RouteTable: Sendable, Equatable {
    /// In the order of the file, duplicates (same uri, same hash) folded.
    package let entries: [RouteEntry]
    private let index: [URIPath: Int]

    package init(entries list: [RouteEntry]) throws(CenariusError) {
        // Tables rarely list a uri twice: then `list` is kept as it is, not copied (a million
        // entries are tens of MB), and only the index is built.
        var firstIndex: [URIPath: Int] = [:]
        firstIndex.reserveCapacity(list.count)
        var folded = false
        for (position, entry) in list.enumerated() {
            if firstIndex.updateValue(position, forKey: entry.uri) != nil {
                folded = true
                break
            }
        }
        if !folded {
            if let (file, inside) = RouteTable.folderConflict(list) {
                throw .integrity("route table lists \"\(file)\" as a file and as the folder of \"\(inside)\": no file system can hold both")
            }
            self.entries = list
            self.index = firstIndex
            return
        }
        firstIndex = [:]
        var entries: [RouteEntry] = []
        entries.reserveCapacity(list.count)
        var index: [URIPath: Int] = [:]
        index.reserveCapacity(list.count)
        for entry in list {
            if let existing = index[entry.uri] {
                if entries[existing].hash != entry.hash {
                    throw .integrity("route table lists \"\(entry.uri)\" twice with different hashes (\(entries[existing].hash), \(entry.hash))")
                }
                continue
            }
            index[entry.uri] = entries.count
            entries.append(entry)
        }
        if let (file, inside) = RouteTable.folderConflict(entries) {
            throw .integrity("route table lists \"\(file)\" as a file and as the folder of \"\(inside)\": no file system can hold both")
        }
        self.entries = entries
        self.index = index
    }

    /// A uri that is also another uri's folder (`conf` and `conf/b`): the first such pair.
    private static func folderConflict(_ entries: [RouteEntry]) -> (file: URIPath, inside: URIPath)? {
        var folders: [FolderKey: Int] = [:]
        var lastParent: Substring = ""
        for (position, entry) in entries.enumerated() {
            let value = entry.uri.value
            guard let slash = value.utf8.lastIndex(of: UInt8(ascii: "/")) else { continue }
            let parent = value[..<slash]
            // Tables list a folder's files together: its prefixes were just recorded.
            if parent.utf8.elementsEqual(lastParent.utf8) { continue }
            lastParent = parent
            for index in parent.utf8.indices where parent.utf8[index] == UInt8(ascii: "/") {
                let key = FolderKey(text: value[..<index])
                if folders[key] == nil { folders[key] = position }
            }
            if folders[FolderKey(text: parent)] == nil { folders[FolderKey(text: parent)] = position }
        }
        guard !folders.isEmpty else { return nil }
        for entry in entries {
            if let inside = folders[FolderKey(text: Substring(entry.uri.value))] { return (entry.uri, entries[inside].uri) }
        }
        return nil
    }

    /// A folder's path, compared as bytes like the uris themselves.
    private struct FolderKey: Hashable {
        let text: Substring
        static func == (lhs: FolderKey, rhs: FolderKey) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }
        func hash(into hasher: inout Hasher) { URIPath.hashBytes(text.utf8, into: &hasher) }
    }

    package static let empty = try! RouteTable(entries: [])

    /// The largest table read, from a remote or a preset (64 MiB: about a million entries). A
    /// bigger one is refused before it is read: parsing costs a few times its size in memory.
    package static let maxBytes = 64 << 20

    package var count: Int { entries.count }

    package subscript(uri: URIPath) -> RouteEntry? {
        index[uri].map { entries[$0] }
    }

    package static func == (lhs: RouteTable, rhs: RouteTable) -> Bool { lhs.entries == rhs.entries }
}

extension RouteTable {
    /// Parses `Routes.json` bytes. A table with one bad entry is rejected whole (exit 4).
    /// `source` names the file or URL in error messages.
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> RouteTable {
        let parsed: Result<[RouteEntry], CenariusError> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(JSONScanner.Failure) {
                scanner.skipByteOrderMark()
                var entries: [RouteEntry] = []
                try scanner.array { s throws(JSONScanner.Failure) in
                    entries.append(try parseEntry(&s, number: entries.count))
                }
                scanner.skipWhitespace()
                if !scanner.atEnd { throw scanner.fail("trailing data after the table") }
                return .success(entries)
            } catch {
                return .failure(.integrity("invalid route table \(source): \(error.reason) at byte \(error.offset)"))
            }
        }
        return try RouteTable(entries: parsed.get())
    }

    private static func parseEntry(_ s: inout JSONScanner, number: Int) throws(JSONScanner.Failure) -> RouteEntry {
        var uri: String?
        var hash: String?
        var size: Int64?
        let start = s.offset
        try s.object { s, key throws(JSONScanner.Failure) in
            switch key {
            // Later Cenarius releases renamed `uri` to `file`.
            case "uri", "file":
                guard s.peek() == UInt8(ascii: "\"") else { throw s.fail("entry \(number): \"\(key)\" is not a string") }
                if uri != nil { throw s.fail("entry \(number): path given twice") }
                uri = try s.string()
            case "hash":
                guard s.peek() == UInt8(ascii: "\"") else { throw s.fail("entry \(number): \"hash\" is not a string") }
                hash = try s.string()
            case "size":
                size = try s.integer()
            default:
                try s.skipValue()
            }
        }
        guard let uri else { throw JSONScanner.Failure(offset: start, reason: "entry \(number) has no \"uri\"") }
        guard let hash else { throw JSONScanner.Failure(offset: start, reason: "entry \(number) (\(uri)) has no \"hash\"") }
        guard let contentHash = ContentHash(hex: hash) else {
            throw JSONScanner.Failure(offset: start, reason: "entry \(number) (\(uri)): hash \"\(hash.prefix(80))\" is not 32 or 64 hex digits")
        }
        let path: URIPath
        do { path = try URIPath(validating: uri) } catch {
            throw JSONScanner.Failure(offset: start, reason: "entry \(number): \(error.message)")
        }
        return RouteEntry(uri: path, hash: contentHash, size: size)
    }

    /// The canonical encoding `cenariusd routes` writes: one entry per line, sorted by uri,
    /// so that diffs of a published table are readable.
    package func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 80 + 4)
        out.append(contentsOf: "[".utf8)
        for (i, entry) in entries.sorted(by: { $0.uri < $1.uri }).enumerated() {
            out.append(contentsOf: (i == 0 ? "\n  " : ",\n  ").utf8)
            out.append(contentsOf: "{\"uri\": ".utf8)
            JSONText.appendString(entry.uri.value, to: &out)
            out.append(contentsOf: ", \"hash\": \"\(entry.hash.hex)\"".utf8)
            if let size = entry.size { out.append(contentsOf: ", \"size\": \(size)".utf8) }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "\n]\n".utf8)
        return out
    }
}

/// JSON string encoding shared by the writers (tables, `--json` output).
package enum JSONText {
    package static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0..<0x20, 0x7F:
                let hex = String(byte, radix: 16)
                out.append(contentsOf: ("\\u00" + (hex.count == 1 ? "0" : "") + hex).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    package static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
