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
    @Option(help: ArgumentHelp("Ed25519 private key: also write Routes.json.sig (G8); repeatable, every key signs the same version.", valueName: "file")) var signKey: [String] = []
    @Option(help: ArgumentHelp("Version signed into the sidecar; must grow with every release (default: now in milliseconds, and always above the sidecar's previous version).", valueName: "n")) var tableVersion: Int64?
    @Option(help: ArgumentHelp("Signature: devices refuse the table this long after signing (90s, 30m, 12h, 7d).", valueName: "duration")) var expires: String?
    @Option(help: ArgumentHelp("Signature: publish a key rotation statement from keygen --rotate-from; repeatable, oldest first.", valueName: "file")) var rotation: [String] = []
    @Option(help: ArgumentHelp("Also write the release manifest Routes.json.release, naming the release (G10).", valueName: "name")) var release: String?
    @Option(help: ArgumentHelp("Manifest: the lowest host version the release runs on (compared numerically).", valueName: "version")) var requiresNative: String?
    @Option(help: ArgumentHelp("Manifest: when the rollout starts, unix seconds (default now when a duration is given).", valueName: "seconds")) var rolloutStart: Double?
    @Option(help: ArgumentHelp("Manifest: seconds over which the fleet adopts the release.", valueName: "seconds")) var rolloutDuration: Double?
    @Flag(help: "Manifest: halt the rollout (devices that have not switched stay where they are).") var halted = false
    @Flag(help: "Print one JSON object.") var json = false
    @Flag(help: "Also write compressed forms, a pack and their index under DIR/_cenarius/ (B8).") var compress = false
    @Option(help: ArgumentHelp("An earlier release (a folder with its table): also write patches from its files (repeatable; implies --compress).", valueName: "old"))
    var deltaFrom: [String] = []

    @Option(help: ArgumentHelp("File name of the route table.", valueName: "name"))
    var routesName: String = "Routes.json"

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
        if let rolloutDuration, Seconds(exactly: rolloutDuration) == nil {
            throw ValidationError("--rollout-duration must be a number of seconds from 0 to \(Whole.text(Seconds.limit))")
        }
        if let rolloutStart, UnixTime(exactly: rolloutStart) == nil {
            throw ValidationError("--rollout-start must be unix seconds from 0 to \(Whole.text(Seconds.limit))")
        }
        if let expires, RoutesCommand.seconds(expires) == nil { throw ValidationError("--expires must be a duration such as 90s, 30m, 12h or 7d") }
        if signKey.isEmpty, expires != nil || !rotation.isEmpty { throw ValidationError("--expires and --rotation need --sign-key") }
    }

    /// The manifest the options describe; nil when none was asked for.
    func manifest() throws(CenariusError) -> ReleaseManifest? {
        guard release != nil || requiresNative != nil || rolloutStart != nil || rolloutDuration != nil || halted else { return nil }
        var manifest = ReleaseManifest(release: release)
        if let requiresNative { manifest.requiresNative = try NativeVersion(requiresNative) }
        if rolloutStart != nil || rolloutDuration != nil || halted {
            // Checked in validate(); the clock is ours.
            manifest.rollout = .init(start: UnixTime(exactly: rolloutStart ?? FileSystem.now().rounded(.down)) ?? 0,
                                     duration: rolloutDuration.flatMap(Seconds.init(exactly:)) ?? .zero, halted: halted)
        }
        return manifest
    }

    func run() async throws {
        let builder = RouteTableBuilder(root: directory, routesName: routesName, algorithm: ContentHash.Algorithm(rawValue: algorithm)!)
        let result = try builder.build()
        for (path, reason) in result.skipped { Output.warn("skipped \(path): \(reason)") }
        let target = output ?? FileSystem.join(directory, routesName)
        var summary = Summary(table: target, entries: result.table.count, bytes: result.bytes, skipped: result.skipped.map(\.path))
        if check {
            let existingBytes = try FileSystem.readFile(target)
            let existing = try RouteTable.parse(existingBytes, source: target)
            let difference = TableDifference(from: existing, to: result.table)
            // A compressed table that is not this table's bytes is what devices that poll it get.
            let staleForm = output == nil ? staleTableForm(table: existingBytes) ?? headWriter.stale(table: existingBytes) : nil
            let problem = difference.isEmpty ? staleForm : difference.summary
            summary.upToDate = problem == nil
            summary.difference = problem
            if json { Output.json(summary) } else if problem == nil { Output.line("\(target) is up to date (\(result.table.count) entries)") }
            if let problem { throw CenariusError.integrity("\(target) is out of date: \(problem)") }
            return
        }
        let bytes = result.table.serialized()
        if target == "-" {
            print(String(decoding: bytes, as: UTF8.self), terminator: "")
            return
        }
        let written = try manifest()?.serialized()
        // A manifest already beside the table stays in force for the new table; it is signed with it.
        let kept = written == nil ? try? FileSystem.readFile(target + ".release", limit: 64 << 10) : nil
        if kept != nil { Output.warn("\(target).release from an earlier run stays beside the new table (pass --release etc. to rewrite it, or delete it)") }
        let manifest = written ?? kept
        try FileSystem.writeAtomically(bytes, to: target)
        if let written {
            try FileSystem.writeAtomically(written, to: target + ".release")
            if !json { Output.line("wrote \(target).release: \(String(decoding: written.dropLast(), as: UTF8.self))") }
        }
        var index: [UInt8]?
        if compress || !deltaFrom.isEmpty {
            let olds = try deltaFrom.map { old throws(CenariusError) in
                let path = FileSystem.join(old, routesName)
                let bytes = try FileSystem.readFile(path)
                return FormPublisher.Release(root: old, table: try RouteTable.parse(bytes, source: path), tableBytes: bytes)
            }
            var publisher = FormPublisher(release: .init(root: directory, table: result.table), tableBytes: bytes, olds: olds)
            publisher.routesName = routesName
            // Written last (writeHead), when the table is written into DIR.
            publisher.head = output == nil
            let forms = try publisher.publish()
            index = try FileSystem.readFile(forms.index)
            summary.forms = forms
            if !json {
                Output.line("wrote \(forms.index): \(forms.compressedForms) compressed forms (\(Output.bytes(forms.compressedBytes))), "
                    + "\(forms.patches) patches (\(Output.bytes(forms.patchBytes))), a pack of \(Output.bytes(forms.packBytes))")
            }
        }
        if index == nil, output == nil { try removeTableForm() }
        if !signKey.isEmpty { try sign(table: bytes, manifest: manifest, index: index, sidecar: target + ".sig", keys: signKey) }
        if output == nil {
            // Last: the one name devices poll, naming only what is already written.
            let head = try headWriter.write(table: bytes, manifest: manifest, index: index, sidecar: signKey.isEmpty ? nil : target + ".sig", keys: signKey)
            summary.head = headPath
            summary.headVersion = head.version
            if !json { Output.line("wrote \(headPath): version \(head.version)\(head.signature == nil ? "" : ", signed")") }
        }
        if json { Output.json(summary) } else { Output.line("wrote \(target): \(result.table.count) entries, \(Output.bytes(result.bytes))") }
    }

    var headWriter: HeadWriter { HeadWriter(directory: directory, routesName: routesName) }
    var headPath: String { headWriter.headPath }

    private var tableFormPath: String { FileSystem.join(directory, ReleaseIndex.tablePath(routesName)) }

    /// A plain run leaves no compressed table of an earlier `--compress` run behind: devices that
    /// saw it poll it instead of the table, and would stay on that release.
    private func removeTableForm() throws(CenariusError) {
        guard FileSystem.exists(tableFormPath) else { return }
        FileSystem.removeTree(tableFormPath)
        guard !FileSystem.exists(tableFormPath) else { throw FileSystem.failure("cannot remove the stale compressed table", tableFormPath) }
        Output.warn("removed \(tableFormPath) of an earlier --compress run (pass --compress to publish compressed forms again)")
    }

    /// Why the compressed table beside the table is not its form (nil: it is, or there is none).
    private func staleTableForm(table: [UInt8]) -> String? {
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
