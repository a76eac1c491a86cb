import ArgumentParser
import Publishing
import RouteSync
import Transport

#if canImport(Glibc)
import Glibc
#endif

struct BundleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Make an offline bundle of a channel's release: one file or a folder for a USB stick (publishers).",
        discussion: """
            Reads what `publish` wrote (a folder, file:///PATH or s3://BUCKET/PREFIX) and writes the \
            channel's signed head and exactly the store objects a device on one of the --from releases \
            needs for the release (none given: a first install, at the size of the solid pack). A \
            bundle is itself a remote: a device applies it with `cenariusd import`, or syncs from a \
            bundle folder with --remote file:///PATH. --output writes one POSIX tar (readable with \
            tar -tvf; docs/bundles.md has its layout byte by byte), --out-dir a folder.

            Example:
              cenariusd bundle s3://assets/app --channel default --output /media/stick/app.cenarius.tar
              cenariusd bundle /srv/www --from r2 --from r3 --first-install --out-dir /media/stick/app
            """)

    @Argument(help: ArgumentHelp("Where the releases are published: a folder, file:///PATH or s3://BUCKET/PREFIX.", valueName: "source")) var source: String
    @Option(help: ArgumentHelp("The channel whose release the bundle carries.", valueName: "channel")) var channel = ReleaseHead.defaultChannel
    @Option(help: ArgumentHelp("The release to carry: a version or release name (default: what the channel's head serves).", valueName: "release"))
    var release: String?
    @Option(help: ArgumentHelp("A release devices are on (version, release name, or table SHA-256 prefix); repeatable. None: a first install.", valueName: "release"))
    var from: [String] = []
    @Flag(help: "With --from: also carry what a device with no release needs (the solid pack).") var firstInstall = false
    @Option(help: ArgumentHelp("Write the bundle as one POSIX tar to this file (- for standard output).", valueName: "file")) var output: String?
    @Option(help: ArgumentHelp("Write the bundle as a folder (a remote a device may sync from).", valueName: "dir")) var outDir: String?
    @OptionGroup var remoteOptions: DestinationOptions
    @Flag(help: "Print one JSON object.") var json = false

    struct Summary: Encodable {
        var bundle: String
        var channel: String
        var version: Int64
        var release: String?
        var table: String
        var from: [String]
        var firstInstall: Bool
        var members: Int
        var bytes: Int64
        var seconds: Double
    }

    func validate() throws {
        try ReleaseHead.validateChannel(channel)
        guard (output == nil) != (outDir == nil) else { throw ValidationError("give one of --output FILE and --out-dir DIR") }
        if json, output == "-" { throw ValidationError("--json and --output - would both write to standard output") }
        if firstInstall, from.isEmpty { throw ValidationError("--first-install adds to --from; without --from a bundle is a first install already") }
    }

    func run() async throws {
        let started = FileSystem.monotonic()
        let source = try remoteOptions.open(self.source)
        let state = try RemoteState.read(source, channel: channel, routesName: remoteOptions.routesName)
        let (head, headBytes) = try BundleSelection.release(state, release)
        let parts = try StoredRelease.parts(of: head, from: source)
        var records: [ReleaseRecord] = []
        for name in state.channels.sorted() {
            records += name == channel ? state.records : try RemoteState.records(in: source, objects: state.objects, channel: name)
        }
        var bases: [BundlePlan.Base] = []
        for selector in from { bases.append(try BundleSelection.base(selector, records: records, in: source, objects: state.objects)) }
        let plan = try BundlePlan(head: head, headBytes: headBytes, headKey: state.headKey, parts: parts, bases: bases,
                                  firstInstall: from.isEmpty || firstInstall)
        let writer = BundleWriter(source: source, plans: [plan], created: Int64(FileSystem.now()))
        let members = try writer.members(listing: state.objects)
        let total = members.reduce(Int64(0)) { $0 + $1.size }
        let bar = ProgressBar.make("bundle", json: json || output == "-")
        let progress = { (done: Int, bytes: Int64) -> Void in bar?.update(TransferProgress(filesDone: done, filesTotal: members.count, bytes: bytes)) }
        let written: String
        if let outDir {
            try writer.writeFolder(FileSystem.absolute(outDir), members: members, progress: progress)
            written = FileSystem.absolute(outDir)
        } else if output == "-" {
            try writer.writeTar(to: STDOUT_FILENO, members: members, progress: progress)
            written = "-"
        } else {
            let path = FileSystem.absolute(output ?? "")
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
            // Renamed into place once whole and flushed: a stick pulled out meanwhile holds no half bundle by its name.
            var failure: CenariusError?
            do {
                try FileSystem.writeAtomically(to: path) { fd in
                    do throws(CenariusError) { try writer.writeTar(to: fd, members: members, progress: progress); return true } catch {
                        failure = error
                        return false
                    }
                }
            } catch {
                throw failure ?? error
            }
            written = path
        }
        bar?.finish()
        let summary = Summary(bundle: written, channel: channel, version: head.version, release: plan.release.release, table: head.table,
                              from: plan.release.from, firstInstall: plan.release.firstInstall, members: members.count + 1, bytes: total,
                              seconds: FileSystem.monotonic() - started)
        if json { Output.json(summary); return }
        guard output != "-" else { return }
        let whom = (summary.from.isEmpty ? [] : ["devices on " + summary.from.map { String($0.prefix(12)) }.joined(separator: ", ")])
            + (summary.firstInstall ? ["a first install"] : [])
        Output.line("bundled release \(summary.release ?? String(head.version)) of channel \(channel) (version \(head.version)) for \(whom.joined(separator: " and ")): "
            + "\(summary.members) members, \(Output.bytes(total)) in \(written), \(Output.seconds(summary.seconds))")
    }
}
