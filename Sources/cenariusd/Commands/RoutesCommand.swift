import ArgumentParser
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
        let summary = try write(into: outDir ?? directory, quiet: json)
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
        let staleForm = output == nil ? staleTableForm(table: existingBytes, root: directory) ?? headWriter(directory).stale(table: existingBytes) : nil
        let problem = difference.isEmpty ? staleForm : difference.summary
        summary.upToDate = problem == nil
        summary.difference = problem
        if json { Output.json(summary) } else if problem == nil { Output.line("\(target) is up to date (\(result.table.count) entries)") }
        if let problem { throw CenariusError.integrity("\(target) is out of date: \(problem)") }
    }

    /// `--output FILE` with release options or keys: FILE.release and FILE.sig, as beside a
    /// folder's own table (scripts that sign a table written elsewhere; no head, no forms).
    private func writeSidecars(table: [UInt8], beside target: String) throws {
        let manifest = try releaseManifest(beside: target, quiet: json)
        if !signKey.isEmpty { try sign(table: table, manifest: manifest, sidecar: target + ".sig", keys: signKey, quiet: json) }
    }

    /// The manifest the options ask for, written beside `target`; else the one already there, kept.
    private func releaseManifest(beside target: String, quiet: Bool) throws -> [UInt8]? {
        guard let written = try releaseOptions.manifest()?.serialized() else {
            // A manifest already beside the table stays in force for the new table; it is signed with it.
            let kept = try? FileSystem.readFile(target + ".release", limit: 64 << 10)
            if kept != nil, !quiet { Output.warn("\(target).release from an earlier run stays beside the new table (pass --release etc. to rewrite it, or delete it)") }
            return kept
        }
        try FileSystem.writeAtomically(written, to: target + ".release")
        if !quiet { Output.line("wrote \(target).release: \(String(decoding: written.dropLast(), as: UTF8.self))") }
        return written
    }

    private var builder: RouteTableBuilder {
        RouteTableBuilder(root: directory, routesName: routesName, algorithm: ContentHash.Algorithm(rawValue: algorithm)!)
    }

    /// Where a release's forms come from.
    enum Forms {
        /// Made from the folder (`--compress`, `--delta-from`): every file compressed, packs, patches.
        case made
        /// Made, taking what a store already holds for this table as it is (`earlier`'s packs and
        /// patches, the forms in the folder): a rollback or promotion makes only patches and delta
        /// packs from the channel's last releases.
        case remade(earlier: ReleaseIndex, storeHolds: (String) -> Bool)
        /// The store's, as a head names them: a republish of the table a channel's head already
        /// names (halt, resume) writes pointers only, in a moment whatever the site's size.
        case stored(index: [UInt8], tableForm: [UInt8]?)
        /// Made, with an earlier solid pack carried forward while the delta pack from its table
        /// stays small (`publish`): files the store and every base release hold are not compressed again.
        case carrying(FormPublisher.Carry, storeHolds: (String) -> Bool, storeRead: (String) -> [UInt8]?)

        var isMade: Bool {
            if case .stored = self { return false }
            return true
        }
    }

    /// Writes a whole release of DIR into `root` (DIR itself, or `--out-dir`, where `publish`
    /// stages): the table, the manifest, the forms, the signature and, last, the head.
    /// `formsAtURI`: the release's files are uploaded at their uris too (`publish` to the default channel, FormPublisher.formsAtURI).
    func write(into root: String, quiet: Bool, forms source: Forms = .made, formsAtURI: Bool = false) throws -> Summary {
        let target = FileSystem.join(root, routesName)
        try refuseUnsigning(root: root, sidecar: target + ".sig")
        let result = try builder.build()
        // `publish` stages quietly and has said so itself.
        if !quiet { for (path, reason) in result.skipped { Output.warn("skipped \(path): \(reason)") } }
        if root != directory { try FileSystem.makeDirectories(root) }
        var summary = Summary(table: target, entries: result.table.count, bytes: result.bytes, skipped: result.skipped.map(\.path))
        let bytes = result.table.serialized()
        try FileSystem.writeAtomically(bytes, to: target)
        let manifest = try releaseManifest(beside: target, quiet: quiet)
        var index: [UInt8]?
        // What the sidecar vouches for: the index under the table's hash, which devices that predate
        // heads read (written once, so for a table published before it is that earlier index).
        var legacyIndex: [UInt8]?
        var tableForm: [UInt8]?
        var bases: [[UInt8]] = []
        if case .stored(let storedIndex, let storedForm) = source {
            index = storedIndex
            tableForm = storedForm
            legacyIndex = try FormPublisher.writeLegacyIndex(storedIndex, table: ReleaseIndex.tableDigest(bytes), root: root)
        } else if compress || !deltaFrom.isEmpty {
            let olds = try deltaFrom.map { old throws(CenariusError) in
                let path = FileSystem.join(old, routesName)
                let bytes = try FileSystem.readFile(path)
                return FormPublisher.Release(root: old, table: try RouteTable.parse(bytes, source: path), tableBytes: bytes)
            }
            bases = olds.map(\.tableBytes)
            var publisher = FormPublisher(release: .init(root: directory, table: result.table), tableBytes: bytes, olds: olds)
            publisher.routesName = routesName
            publisher.outputRoot = root
            publisher.formsAtURI = formsAtURI
            if case .remade(let earlier, let storeHolds) = source {
                publisher.reusing = earlier
                publisher.storeHolds = storeHolds
            }
            if case .carrying(let carry, let storeHolds, let storeRead) = source {
                publisher.carry = carry
                publisher.storeHolds = storeHolds
                publisher.storeRead = storeRead
            }
            // Written last (writeHead).
            publisher.head = true
            let published = try publisher.publish()
            let forms = published.summary
            index = published.index
            legacyIndex = published.legacyIndex
            tableForm = published.tableForm
            summary.forms = forms
            if !quiet {
                Output.line("wrote \(forms.index): \(forms.compressedForms) compressed forms (\(Output.bytes(forms.compressedBytes))), "
                    + "\(forms.patches) patches (\(Output.bytes(forms.patchBytes))), a pack of \(Output.bytes(forms.packBytes))"
                    + (forms.solidPackBytes > 0 ? ", a solid pack of \(Output.bytes(forms.solidPackBytes))" : ""))
            }
        }
        try removeTableForm(root: root)
        if !signKey.isEmpty { try sign(table: bytes, manifest: manifest, index: legacyIndex, sidecar: target + ".sig", keys: signKey, quiet: quiet) }
        // Last: the one name devices poll, naming only what is already written.
        let writer = headWriter(root)
        let head = try writer.write(table: bytes, manifest: manifest, index: index, tableForm: tableForm, bases: bases, sidecar: signKey.isEmpty ? nil : target + ".sig", keys: signKey)
        summary.head = writer.headPath
        summary.headVersion = head.version
        if !quiet { Output.line("wrote \(writer.headPath): version \(head.version)\(head.signature == nil ? "" : ", signed")") }
        return summary
    }

    /// A release written without a key over a signed one would be refused by every device that
    /// holds a public key: only on purpose (`--unsigned`), and then the old signature goes too.
    private func refuseUnsigning(root: String, sidecar: String) throws(CenariusError) {
        guard signKey.isEmpty else { return }
        let signedHead = headWriter(root).current?.signature != nil
        guard signedHead || FileSystem.exists(sidecar) else { return }
        guard releaseOptions.unsigned else {
            throw Self.signedChannel(channel == ReleaseHead.defaultChannel ? root : "channel \(channel) of \(root)")
        }
        FileSystem.removeTree(sidecar)
    }

    /// The refusal of an unsigned release over a signed one, in the words every command uses.
    static func signedChannel(_ what: String) -> CenariusError {
        .usage("\(what) is signed: pass --sign-key (devices that hold a public key refuse an unsigned head), or --unsigned to stop signing it on purpose")
    }

    var signKey: [String] { releaseOptions.signKey }
    var tableVersion: Int64? { releaseOptions.tableVersion }
    var expires: String? { releaseOptions.expires }
    var rotation: [String] { releaseOptions.rotation }

    func headWriter(_ root: String) -> HeadWriter { HeadWriter(directory: root, routesName: routesName, channel: channel) }

    private func tableFormPath(_ root: String) -> String { FileSystem.join(root, ReleaseIndex.tablePath(routesName)) }

    /// No run leaves the compressed table of an earlier version's `--compress` behind: devices that
    /// saw it poll it instead of the table, and would stay on that release. It was the one mutable
    /// name under `_cenarius/`; the head names the compressed table by its hash now.
    private func removeTableForm(root: String) throws(CenariusError) {
        let tableFormPath = tableFormPath(root)
        guard FileSystem.exists(tableFormPath) else { return }
        FileSystem.removeTree(tableFormPath)
        guard !FileSystem.exists(tableFormPath) else { throw FileSystem.failure("cannot remove the stale compressed table", tableFormPath) }
        Output.warn("removed \(tableFormPath), an earlier version's compressed table: devices poll the head now, and devices that predate heads the table itself")
    }

    /// Why the compressed table beside the table is not its form (nil: it is, or there is none).
    private func staleTableForm(table: [UInt8], root: String) -> String? {
        let tableFormPath = tableFormPath(root)
        guard FileSystem.exists(tableFormPath) else { return nil }
        guard Zstd.isAvailable else {
            Output.warn("cannot check \(tableFormPath): libzstd is not available on this machine")
            return nil
        }
        guard let bytes = try? FileSystem.readFile(tableFormPath, limit: 64 << 20),
              let frames = try? Zstd.decompressFrames(bytes, limit: 64 << 20), frames.first == table else {
            return "\(tableFormPath) is not the compressed form of this table (devices that poll it get another release): run routes again"
        }
        return nil
    }
}
