/// Reading an index. Anything malformed is an error (the caller then ignores the index and
/// fetches plain files); numbers must be non-negative and fit; hashes must be hashes.
extension ReleaseIndex {
    /// Parses an index from its bytes; `source` names it in errors.
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> ReleaseIndex {
        var index = ReleaseIndex(table: "")
        var format: String?
        let failure: JSONScanner.Failure? = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(JSONScanner.Failure) {
                try scanner.object { s, name throws(JSONScanner.Failure) in
                    if name == "format" { format = try s.string() } else { try index.read(name, from: &s) }
                }
                scanner.skipWhitespace()
                if !scanner.atEnd { throw scanner.fail("trailing data") }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw .integrity("invalid release index \(source): \(failure.reason) at byte \(failure.offset)") }
        guard format == Self.format else { throw .integrity("release index \(source) has format \(format ?? "none"), expected \(Self.format)") }
        return index
    }

    /// One member of the index's object; unknown members are skipped (later formats add some).
    private mutating func read(_ name: String, from s: inout JSONScanner) throws(JSONScanner.Failure) {
        switch name {
        case "table": table = try s.string()
        case "tableForm": tableForm = try Self.flag(&s)
        case "head": head = try Self.flag(&s)
        case "storedPlain": storedPlain = try Self.flag(&s)
        case "plain", "compressed":
            var named = Set<ContentHash>()
            try s.array { s throws(JSONScanner.Failure) in named.insert(try Self.hash(&s)) }
            plain = name == "plain" ? PlainFiles(named) : .allBut(named)
        case "patches":
            try s.array { s throws(JSONScanner.Failure) in patches.append(try Self.patch(&s)) }
        case "patchSizes": patchSizes = try Self.counts(&s)
        case "formSizes": formSizes = try Self.counts(&s)
        case "deltaPacks":
            try s.array { s throws(JSONScanner.Failure) in deltaPacks.append(try Self.deltaPack(&s)) }
        case "pack": pack = try Self.pack(&s, carried: false).pack
        case "solidPack": solidPack = try Self.pack(&s, carried: false).pack
        case "carriedPack":
            let (pack, from, releases) = try Self.pack(&s, carried: true)
            guard let from, Self.isTableDigest(from), let releases = Int(exactly: releases) else { throw s.fail("a carried pack needs the SHA-256 of its table") }
            carriedPack = CarriedPack(from: from, pack: pack, releases: releases)
        default: try s.skipValue()
        }
    }

    /// `true` is true; any other value is false (and skipped).
    private static func flag(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> Bool {
        let isTrue = s.peek() == UInt8(ascii: "t")
        try s.skipValue()
        return isTrue
    }

    private static func hash(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> ContentHash {
        guard let hash = ContentHash(hex: try s.string()) else { throw s.fail("not a content hash") }
        return hash
    }

    private static func count(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> Int64 {
        let value = try s.integer()
        guard value >= 0 else { throw s.fail("a negative count") }
        return value
    }

    /// `[n, ...]`, each a count.
    private static func counts(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> [Int64] {
        var values: [Int64] = []
        try s.array { s throws(JSONScanner.Failure) in values.append(try count(&s)) }
        return values
    }

    /// `[file hash, base hash]`.
    private static func patch(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> Patch {
        var pair: [ContentHash] = []
        try s.array { s throws(JSONScanner.Failure) in
            guard pair.count < 2 else { throw s.fail("a patch is a file hash and a base hash") }
            pair.append(try hash(&s))
        }
        guard pair.count == 2 else { throw s.fail("a patch is a file hash and a base hash") }
        return Patch(target: pair[0], base: pair[1])
    }

    /// `{"from", "form", "size", "bases"}`, a base "" where a frame has none.
    private static func deltaPack(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> DeltaPack {
        var from: String?, form: ContentHash?, size: Int64?
        var bases: [ContentHash?] = []
        try s.object { s, key throws(JSONScanner.Failure) in
            switch key {
            case "from": from = try s.string()
            case "form": form = try hash(&s)
            case "size": size = try count(&s)
            case "bases":
                try s.array { s throws(JSONScanner.Failure) in
                    let text = try s.string()
                    if text.isEmpty { bases.append(nil) } else {
                        guard let base = ContentHash(hex: text) else { throw s.fail("not a content hash") }
                        bases.append(base)
                    }
                }
            default: try s.skipValue()
            }
        }
        guard let from, let form, let size else { throw s.fail("a delta pack needs from, form and size") }
        return DeltaPack(from: from, hash: form, size: size, bases: bases)
    }

    /// `{"form", "size", "files"}`, and for a carried pack `from` and `releases` (default 1).
    private static func pack(_ s: inout JSONScanner, carried: Bool) throws(JSONScanner.Failure) -> (pack: Pack, from: String?, releases: Int64) {
        var form: ContentHash?, size: Int64?, files: Int64?, from: String?, releases: Int64 = 1
        try s.object { s, key throws(JSONScanner.Failure) in
            switch key {
            case "form": form = try hash(&s)
            case "size": size = try count(&s)
            case "files": files = try count(&s)
            case "from" where carried: from = try s.string()
            case "releases" where carried: releases = try count(&s)
            default: try s.skipValue()
            }
        }
        guard let form, let size, let files, let count = Int(exactly: files) else { throw s.fail("a pack needs a form, a size and a file count") }
        return (Pack(hash: form, size: size, files: count), from, releases)
    }
}
