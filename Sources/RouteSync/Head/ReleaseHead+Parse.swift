/// Reading a head. A head that does not parse, or whose keys have the wrong type, shape or
/// range, is refused whole (exit 4). Unknown keys are ignored (forward compatible).
extension ReleaseHead {
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> ReleaseHead {
        let reader = Reader(source: source)
        guard bytes.count <= maxBytes else { throw reader.refuse("larger than \(maxBytes) bytes") }
        let json = try JSONValue.parse(bytes, source: source)
        guard case .object = json else { throw reader.refuse("not a JSON object") }
        guard json["format"]?.string == format else { throw reader.refuse("format is not \(format)") }
        guard let channel = json["channel"]?.string, isChannel(channel) else { throw reader.refuse("\"channel\" must be a name of lower-case letters, digits and -") }
        guard case .object? = json["table"], let table = json["table"] else { throw reader.refuse("\"table\" must be an object") }
        let version = try reader.count(json["version"], "version", limit: Int64.max)
        var head = ReleaseHead(channel: channel, version: version, table: try reader.digest(table["sha256"], "table.sha256"),
                               tableSize: try reader.count(table["size"], "table.size", limit: ByteCount.limit))
        if let form = table["zst"], form != .null {
            head.tableForm = try reader.digest(form, "table.zst")
            head.tableFormSize = try reader.count(table["zstSize"], "table.zstSize", limit: ByteCount.limit)
        }
        if let patches = table["patches"], patches != .null { head.tablePatches = try reader.tablePatches(patches) }
        if let index = json["index"], index != .null { head.index = try reader.digest(index, "index") }
        head.solidPack = try reader.pack(json["solidPack"], "solidPack")
        head.carriedPack = try reader.pack(json["carriedPack"], "carriedPack")
        head.release = try reader.exactText(json["release"], "release")
        head.signature = try reader.exactText(json["signature"], "signature")
        return head
    }

    /// The checks of a head's values, each refusal naming the head and the key.
    private struct Reader {
        let source: String

        func refuse(_ why: String) -> CenariusError { .integrity("head \(source): \(why)") }

        func digest(_ value: JSONValue?, _ key: String) throws(CenariusError) -> String {
            guard let text = value?.string, ReleaseIndex.isTableDigest(text) else {
                throw refuse("\(key) must be 64 lower-case hex digits (SHA-256)")
            }
            return text
        }

        func count(_ value: JSONValue?, _ key: String, limit: Int64) throws(CenariusError) -> Int64 {
            guard case .number(let text)? = value, let number = Int64(text), number >= 0, number <= limit else {
                throw refuse("\(key) must be a whole number from 0 to \(limit)")
            }
            return number
        }

        func packHint(_ value: JSONValue?, size: JSONValue?, _ key: String) throws(CenariusError) -> PackHint? {
            guard let value, value != .null else { return nil }
            guard let text = value.string, let hash = ContentHash(hex: text) else { throw refuse("\(key) must be a content hash in hex") }
            return PackHint(hash: hash, size: try count(size, key + " size", limit: ByteCount.limit))
        }

        /// `{"form", "size"}` under `key`, or nothing.
        func pack(_ value: JSONValue?, _ key: String) throws(CenariusError) -> PackHint? {
            guard let value, value != .null else { return nil }
            guard case .object = value else { throw refuse("\"\(key)\" must be an object") }
            return try packHint(value["form"], size: value["size"], key)
        }

        /// A file's exact text (the release manifest, the signature), or nothing.
        func exactText(_ value: JSONValue?, _ key: String) throws(CenariusError) -> [UInt8]? {
            guard let value, value != .null else { return nil }
            guard let text = value.string else { throw refuse("\"\(key)\" must be a string (the file's exact text)") }
            return Array(text.utf8)
        }

        /// More than a publisher writes are ignored, not refused: a later version may keep more.
        func tablePatches(_ patches: JSONValue) throws(CenariusError) -> [TablePatch] {
            guard case .array(let list) = patches else { throw refuse("table.patches must be an array") }
            var entries: [TablePatch] = []
            for patch in list.prefix(maxTablePatches) {
                guard case .object = patch else { throw refuse("table.patches holds objects") }
                var entry = TablePatch(from: try digest(patch["from"], "table.patches.from"), digest: try digest(patch["sha256"], "table.patches.sha256"),
                                       size: try count(patch["size"], "table.patches.size", limit: ByteCount.limit))
                entry.pack = try packHint(patch["pack"], size: patch["packSize"], "table.patches.pack")
                if let bytes = patch["bytes"], bytes != .null {
                    // Checked against its SHA-256 where it is used, like a patch fetched from the store.
                    guard let text = bytes.string, let decoded = Base64.decode(text), decoded.count <= maxInlinePatch else {
                        throw refuse("table.patches.bytes must be base64 of at most \(maxInlinePatch) bytes")
                    }
                    entry.inline = decoded
                }
                entries.append(entry)
            }
            return entries
        }
    }
}
