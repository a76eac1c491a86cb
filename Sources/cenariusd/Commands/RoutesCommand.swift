import ArgumentParser
import Publishing
import RouteSync

struct RoutesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract: "Write the route table of a folder (publishers), or check it.",
        discussion: """
            Hashes every regular file under DIR (hidden files, symlinks and the table itself are left \
            out) and writes DIR/Routes.json sorted by uri, with sizes. --check compares instead and \
            exits 4 when the table is out of date.

            With --release, --requires-native, --rollout-start, --rollout-duration or --halted it also \
            writes the release manifest DIR/Routes.json.release (G10); with --sign-key the signature \
            covers the table and the manifest; \
            run it again with another --sign-key over an unchanged table to add a signature (G8).

            It also writes the head DIR/Routes.head, the one name devices that know it poll, and the \
            table under its content hash in DIR/_cenarius/t/ (docs/remote-layout.md).

            With --compress it also writes DIR/_cenarius/: a zstd form of every file, packs of them \
            for a first install and for a release, and an index (docs/release-bytes.md). \
            --delta-from OLD (repeatable, implies --compress) adds patches from OLD's files for \
            every file OLD lacks. Devices use them when present; a remote without them works as before.

            Example:
              cenariusd routes ./www
              cenariusd routes ./www --check
              cenariusd routes ./www --release 2026.11-a --rollout-duration 86400 --sign-key release.key
              cenariusd routes ./www --sign-key release.key --expires 7d
              cenariusd routes ./www --sign-key second.key        # adds a signature, same version
              cenariusd routes ./www --sign-key new.key --rotation new.rotation
              cenariusd routes ./www-2 --delta-from ./www-1 --sign-key release.key

            """)

    @Argument(help: ArgumentHelp("The folder to describe.", valueName: "dir"))
    var directory: String

    @Option(help: ArgumentHelp("Where to write the table (default DIR/Routes.json; - for stdout).", valueName: "file"))
    var output: String?

    @Option(help: "Hash algorithm: md5 (Cenarius' own) or sha256.")
    var algorithm: String = "md5"

    @Flag(help: "Compare with the existing table; exit 4 if it is out of date.") var check = false
    @OptionGroup var releaseOptions: ReleaseOptions
    @Flag(help: "Print one JSON object.") var json = false
    @Flag(help: "Also write compressed forms, a pack and their index under DIR/_cenarius/ (B8).") var compress = false
    @Option(help: ArgumentHelp("An earlier release (a folder with its table): also write patches from its files (repeatable; implies --compress).", valueName: "old"))
    var deltaFrom: [String] = []

    @Option(help: ArgumentHelp("File name of the route table.", valueName: "name"))
    var routesName: String = "Routes.json"

    @Option(help: ArgumentHelp("Write the head of this channel (Routes.CHANNEL.head) instead of the default one's.", valueName: "channel"))
    var channel: String = ReleaseHead.defaultChannel

    @Option(help: ArgumentHelp("Write the table, its sidecars, the head and _cenarius/ into this folder, leaving DIR as it is (a read-only build folder).", valueName: "folder"))
    var outDir: String?

    struct Summary: Encodable {
        var table: String
        var entries: Int
        var bytes: Int64
        var skipped: [String]
        var upToDate: Bool?
        var difference: String?
        var forms: FormPublisher.Summary?
        /// The head written (docs/remote-layout.md), and its version.
        var head: String?
        var headVersion: Int64?
    }

    func validate() throws {
        guard ContentHash.Algorithm(rawValue: algorithm) != nil else { throw ValidationError("--algorithm must be md5 or sha256") }
        try ReleaseHead.validateChannel(channel)
        if outDir != nil, output != nil || check { throw ValidationError("--out-dir writes a whole release: not with --output or --check") }
        if output != nil, compress || !deltaFrom.isEmpty {
            throw ValidationError("--output writes the table and its sidecars, not forms: write a whole release (forms, patches, head) with --out-dir")
        }
        if output == "-", !signKey.isEmpty || releaseOptions.manifestAsked {
            throw ValidationError("--output - prints the table alone: give --output FILE to write the signature and manifest beside it")
        }
    }

    func run() async throws {
        if check || output != nil {
            try checkOrPrint()
            return
        }
        let summary = try write(into: outDir ?? directory)
        if json { Output.json(summary) } else { Output.line("wrote \(summary.table): \(summary.entries) entries, \(Output.bytes(summary.bytes))") }
    }

    /// `--check`, and `--output` (the table, to a file or stdout; beside a file, the manifest and the signature).
    private func checkOrPrint() throws {
        let result = try builder.build()
        for (path, reason) in result.skipped { Output.warn("skipped \(path): \(reason)") }
        let target = output ?? FileSystem.join(directory, routesName)
        var summary = Summary(table: target, entries: result.table.count, bytes: result.bytes, skipped: result.skipped.map(\.path))
        guard check else {
            let bytes = result.table.serialized()
            if target == "-" {
                print(String(decoding: bytes, as: UTF8.self), terminator: "")
            } else {
                try FileSystem.writeAtomically(bytes, to: target)
                try writeSidecars(table: bytes, beside: target)
            }
            if json { Output.json(summary) } else if target != "-" { Output.line("wrote \(target): \(result.table.count) entries, \(Output.bytes(result.bytes))") }
            return
        }
        let existingBytes = try FileSystem.readFile(target)
        let existing = try RouteTable.parse(existingBytes, source: target)
        let difference = TableDifference(from: existing, to: result.table)
        // A compressed table that is not this table's bytes is what devices that poll it get.
        let staleForm = output == nil ? staleTableForm(table: existingBytes) ?? staleHead(table: existingBytes) : nil
        let problem = difference.isEmpty ? staleForm : difference.summary
        summary.upToDate = problem == nil
        summary.difference = problem
        if json { Output.json(summary) } else if problem == nil { Output.line("\(target) is up to date (\(result.table.count) entries)") }
        if let problem { throw CenariusError.integrity("\(target) is out of date: \(problem)") }
    }

    /// `--output FILE` with release options or keys: FILE.release and FILE.sig, as beside a
    /// folder's own table (scripts that sign a table written elsewhere; no head, no forms).
    private func writeSidecars(table: [UInt8], beside target: String) throws {
        let asked = try releaseOptions.manifest()?.serialized()
        // A manifest already beside the table stays in force for the new table; it is signed with it.
        let manifest = asked ?? (try? FileSystem.readFile(target + ".release", limit: 64 << 10))
        if let asked { try FileSystem.writeAtomically(asked, to: target + ".release") }
        if let manifest { sayManifest(manifest, beside: target, kept: asked == nil) }
        guard let signer = try releaseOptions.signer() else { return }
        let previous = try? FileSystem.readFile(target + ".sig", limit: 64 << 10)
        let signed = try signer.sign(table: table, manifest: manifest, index: nil, over: .init(path: target + ".sig", previous: previous), warn: Output.warn)
        try FileSystem.writeAtomically(signed.signature.serialized(), to: target + ".sig")
        if !json { Output.line(Self.signedLine(signed, sidecar: target + ".sig", manifest: manifest != nil)) }
    }

    private func sayManifest(_ manifest: [UInt8], beside target: String, kept: Bool) {
        guard !json else { return }
        if kept {
            Output.warn("\(target).release from an earlier run stays beside the new table (pass --release etc. to rewrite it, or delete it)")
        } else {
            Output.line("wrote \(target).release: \(String(decoding: manifest.dropLast(), as: UTF8.self))")
        }
    }

    private var builder: RouteTableBuilder {
        RouteTableBuilder(root: directory, routesName: routesName, algorithm: ContentHash.Algorithm(rawValue: algorithm)!)
    }

    /// Writes a whole release of DIR into `root` (DIR itself, or `--out-dir`) through the
    /// `ReleaseWriter`, with the folder's own table, sidecar, manifest and head as the previous release.
    func write(into root: String) throws -> Summary {
        let built = try builder.build()
        if !json { for (path, reason) in built.skipped { Output.warn("skipped \(path): \(reason)") } }
        var writer = ReleaseWriter(build: directory, built: built)
        writer.routesName = routesName
        writer.channel = channel
        writer.previous = previousRelease(in: root)
        writer.manifest = try releaseOptions.manifest()?.serialized()
        writer.signer = try releaseOptions.signer()
        writer.unsigned = releaseOptions.unsigned
        writer.forms = compress || !deltaFrom.isEmpty ? .made : nil
        writer.bases = try deltaFrom.map { old throws(CenariusError) in
            let path = FileSystem.join(old, routesName)
            let bytes = try FileSystem.readFile(path)
            return FormPublisher.Release(root: old, table: try RouteTable.parse(bytes, source: path), tableBytes: bytes)
        }
        let release = try writer.write(into: root, warn: Output.warn)
        if !json { say(release) }
        var summary = Summary(table: release.tablePath, entries: built.table.count, bytes: built.bytes, skipped: built.skipped.map(\.path))
        summary.forms = release.forms
        summary.head = release.headPath
        summary.headVersion = release.head.version
        return summary
    }

    /// What the folder holds before this run: the release it had, whose versions grow and whose manifest stays.
    private func previousRelease(in root: String) -> ReleaseWriter.Previous {
        let table = FileSystem.join(root, routesName)
        let headPath = FileSystem.join(root, ReleaseHead.name(routesName: routesName, channel: channel))
        // A sidecar that does not read still makes the folder a signed one.
        let sidecar = FileSystem.exists(table + ".sig") ? (try? FileSystem.readFile(table + ".sig", limit: 64 << 10)) ?? [] : nil
        return .init(sidecar: sidecar, head: try? ReleaseHead.parse(FileSystem.readFile(headPath, limit: ReleaseHead.maxBytes), source: headPath),
                     manifest: try? FileSystem.readFile(table + ".release", limit: 64 << 10))
    }

    /// The lines a run prints, in the order the release was written.
    private func say(_ release: ReleaseWriter.Release) {
        if let manifest = release.manifest { sayManifest(manifest, beside: release.tablePath, kept: release.manifestKept) }
        if let forms = release.forms {
            Output.line("wrote \(forms.index): \(forms.compressedForms) compressed forms (\(Output.bytes(forms.compressedBytes))), "
                + "\(forms.patches) patches (\(Output.bytes(forms.patchBytes))), a pack of \(Output.bytes(forms.packBytes))"
                + (forms.solidPackBytes > 0 ? ", a solid pack of \(Output.bytes(forms.solidPackBytes))" : ""))
        }
        if let signed = release.signed { Output.line(Self.signedLine(signed, sidecar: release.sidecarPath, manifest: release.manifest != nil)) }
        Output.line("wrote \(release.headPath): version \(release.head.version)\(release.head.signature == nil ? "" : ", signed")")
    }

    var signKey: [String] { releaseOptions.signKey }
}
