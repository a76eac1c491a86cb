import Crypto

/// What a remote publishes beside one table so that a device fetches less than whole files
/// (B8): for each file hash, its zstd form and its patches from older files, and packs of the
/// zstd forms for a first install. Written by `routes --compress` to
/// `_cenarius/index/<SHA-256 of the table bytes>.json`, so a device that has the table knows the
/// index's name without asking, and a table without one costs a single 404. Forms and packs are
/// named by their own hash (the table's algorithm) under `_cenarius/z/` and `_cenarius/pack/`.
///
///     {"format": "cenarius-forms-1", "table": "<sha256>",
///      "files": {"<hash>": {"z": ["<form>", <size>], "p": [["<base>", "<form>", <size>]]}},
///      "packs": [{"form": "<hash>", "size": <n>, "members": [["<hash>", <offset>, <length>]]}]}
package struct ReleaseIndex: Sendable, Equatable {
    package static let format = "cenarius-forms-1"
    /// The folder of the remote that holds everything this index names.
    package static let folder = "_cenarius"

    package struct Form: Sendable, Equatable {
        package var hash: ContentHash
        package var size: Int64
        package init(hash: ContentHash, size: Int64) {
            self.hash = hash
            self.size = size
        }
    }

    package struct Patch: Sendable, Equatable {
        package var base: ContentHash
        package var form: Form
        package init(base: ContentHash, form: Form) {
            self.base = base
            self.form = form
        }
    }

    package struct Forms: Sendable, Equatable {
        package var zstd: Form?
        package var patches: [Patch] = []
        package init(zstd: Form? = nil, patches: [Patch] = []) {
            self.zstd = zstd
            self.patches = patches
        }
    }

    package struct Member: Sendable, Equatable {
        package var hash: ContentHash
        package var offset: Int64
        package var length: Int64
        package init(hash: ContentHash, offset: Int64, length: Int64) {
            self.hash = hash
            self.offset = offset
            self.length = length
        }
    }

    /// Zstd forms one after another (each a frame of its own), fetched as one file.
    package struct Pack: Sendable, Equatable {
        package var form: Form
        package var members: [Member]
        package init(form: Form, members: [Member]) {
            self.form = form
            self.members = members
        }
    }

    /// SHA-256 hex of the table bytes this index belongs to.
    package var table: String
    package var files: [ContentHash: Forms] = [:]
    package var packs: [Pack] = []

    package init(table: String, files: [ContentHash: Forms] = [:], packs: [Pack] = []) {
        self.table = table
        self.files = files
        self.packs = packs
    }

    package static func tableDigest(_ bytes: [UInt8]) -> String { StreamingHasher.hex(SHA256.hash(data: bytes)) }
    package static func digest(_ bytes: [UInt8]) -> String { StreamingHasher.hex(SHA256.hash(data: bytes)) }

    /// Paths relative to the remote's base.
    package static func indexPath(table digest: String) -> String { "\(folder)/index/\(digest).json" }
    package static func formPath(_ hash: ContentHash) -> String { "\(folder)/z/\(hash.hex).zst" }
    package static func packPath(_ hash: ContentHash) -> String { "\(folder)/pack/\(hash.hex).pack" }

    package func serialized() -> [UInt8] {
        var out = Array("{\"format\": \"\(Self.format)\", \"table\": \"\(table)\",\n \"files\": {".utf8)
        for (i, (hash, forms)) in files.sorted(by: { $0.key.hex < $1.key.hex }).enumerated() {
            out.append(contentsOf: "\(i == 0 ? "\n  " : ",\n  ")\"\(hash.hex)\": {".utf8)
            var parts: [String] = []
            if let zstd = forms.zstd { parts.append("\"z\": [\"\(zstd.hash.hex)\", \(zstd.size)]") }
            if !forms.patches.isEmpty {
                parts.append("\"p\": [" + forms.patches.map { "[\"\($0.base.hex)\", \"\($0.form.hash.hex)\", \($0.form.size)]" }.joined(separator: ", ") + "]")
            }
            out.append(contentsOf: parts.joined(separator: ", ").utf8)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "},\n \"packs\": [".utf8)
        for (i, pack) in packs.enumerated() {
            out.append(contentsOf: "\(i == 0 ? "" : ", "){\"form\": \"\(pack.form.hash.hex)\", \"size\": \(pack.form.size), \"members\": [".utf8)
            for (j, member) in pack.members.enumerated() {
                out.append(contentsOf: "\(j == 0 ? "\n   " : ",\n   ")[\"\(member.hash.hex)\", \(member.offset), \(member.length)]".utf8)
            }
            out.append(contentsOf: "]}".utf8)
        }
        out.append(contentsOf: "]}\n".utf8)
        return out
    }

    /// Parses an index; anything malformed is an error (the caller then ignores the index and
    /// fetches plain files). Numbers must be non-negative and fit; hashes must be hashes.
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> ReleaseIndex {
        var index = ReleaseIndex(table: "")
        var format: String?
        let failure: JSONScanner.Failure? = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            func hash(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> ContentHash {
                guard let hash = ContentHash(hex: try s.string()) else { throw s.fail("not a content hash") }
                return hash
            }
            func count(_ s: inout JSONScanner) throws(JSONScanner.Failure) -> Int64 {
                let value = try s.integer()
                guard value >= 0 else { throw s.fail("negative size or offset") }
                return value
            }
            do throws(JSONScanner.Failure) {
                try scanner.object { s, name throws(JSONScanner.Failure) in
                    switch name {
                    case "format": format = try s.string()
                    case "table": index.table = try s.string()
                    case "files":
                        try s.object { s, key throws(JSONScanner.Failure) in
                            guard let target = ContentHash(hex: key) else { throw s.fail("not a content hash") }
                            var forms = Forms()
                            try s.object { s, kind throws(JSONScanner.Failure) in
                                switch kind {
                                case "z":
                                    var form: ContentHash?
                                    var size: Int64?
                                    try s.array { s throws(JSONScanner.Failure) in
                                        if form == nil { form = try hash(&s) } else if size == nil { size = try count(&s) } else { throw s.fail("extra field") }
                                    }
                                    guard let form, let size else { throw s.fail("a form needs a hash and a size") }
                                    forms.zstd = Form(hash: form, size: size)
                                case "p":
                                    try s.array { s throws(JSONScanner.Failure) in
                                        var base: ContentHash?, form: ContentHash?, size: Int64?
                                        try s.array { s throws(JSONScanner.Failure) in
                                            if base == nil { base = try hash(&s) } else if form == nil { form = try hash(&s) }
                                            else if size == nil { size = try count(&s) } else { throw s.fail("extra field") }
                                        }
                                        guard let base, let form, let size else { throw s.fail("a patch needs a base, a form and a size") }
                                        forms.patches.append(Patch(base: base, form: Form(hash: form, size: size)))
                                    }
                                default: try s.skipValue()
                                }
                            }
                            index.files[target] = forms
                        }
                    case "packs":
                        try s.array { s throws(JSONScanner.Failure) in
                            var form: ContentHash?, size: Int64?
                            var members: [Member] = []
                            try s.object { s, key throws(JSONScanner.Failure) in
                                switch key {
                                case "form": form = try hash(&s)
                                case "size": size = try count(&s)
                                case "members":
                                    try s.array { s throws(JSONScanner.Failure) in
                                        var member: ContentHash?, offset: Int64?, length: Int64?
                                        try s.array { s throws(JSONScanner.Failure) in
                                            if member == nil { member = try hash(&s) } else if offset == nil { offset = try count(&s) }
                                            else if length == nil { length = try count(&s) } else { throw s.fail("extra field") }
                                        }
                                        guard let member, let offset, let length else { throw s.fail("a member needs a hash, an offset and a length") }
                                        members.append(Member(hash: member, offset: offset, length: length))
                                    }
                                default: try s.skipValue()
                                }
                            }
                            guard let form, let size else { throw s.fail("a pack needs a form and a size") }
                            for member in members {
                                let (end, overflow) = member.offset.addingReportingOverflow(member.length)
                                guard !overflow, end <= size else { throw s.fail("a pack member lies outside its pack") }
                            }
                            index.packs.append(Pack(form: Form(hash: form, size: size), members: members))
                        }
                    default: try s.skipValue()
                    }
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
}
