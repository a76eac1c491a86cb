import ArgumentParser
import Publishing
import RouteSync
import Settings
import Transport

#if canImport(Glibc)
import Glibc
#endif

struct BundleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Make an offline bundle of a channel's release: one file or a folder for a USB stick (publishers).",
        discussion: """
            Reads what `publish` wrote (a folder, file:///PATH, s3://BUCKET/PREFIX, or the remote as \
            devices reach it over http(s)) and writes the \
            channel's signed head and exactly the store objects a device on one of the --from releases \
            needs for the release (none given: a first install, at the size of the solid pack). A \
            bundle is itself a remote: a device applies it with `cenariusd import`, or syncs from a \
            bundle folder with --remote file:///PATH. --output writes one POSIX tar (readable with \
            tar -tvf; docs/bundles.md has its layout byte by byte), --out-dir a folder.

            Example:
              cenariusd bundle s3://assets/app --output /media/stick/app.cenarius.tar
              cenariusd bundle /srv/www --from r2 --first-install --out-dir /media/stick/app
            """)

    @Argument(help: ArgumentHelp("Where the releases are published: a folder, file:///PATH, s3://BUCKET/PREFIX, or an http(s) remote (its head's release; --from by table SHA-256).",
                                 valueName: "source")) var source: String
    @Option(help: ArgumentHelp("A channel whose release the bundle carries; repeatable: channels share one bundle and its objects (default: default).",
                               valueName: "channel"))
    var channel: [String] = []
    @Option(help: ArgumentHelp("The release to carry, with one --channel: a version or release name (default: what the channel's head serves).", valueName: "release"))
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
        /// Every channel carried, the first's release described by the fields beside it.
        var channels: [String]
        var version: Int64
        var release: String?
        var table: String
        var from: [String]
        var firstInstall: Bool
        var members: Int
        var bytes: Int64
        var seconds: Double
    }

    var channels: [String] { channel.isEmpty ? [ReleaseHead.defaultChannel] : channel }

    /// An http(s) remote, read through libcurl with the device's TLS options (`--cacert`).
    private func httpSource() throws(CenariusError) -> HTTPSource {
        var options = TransferOptions()
        options.caFile = remoteOptions.cacert
        return HTTPSource(base: source, options: options)
    }

    func validate() throws {
        for name in channels { try ReleaseHead.validateChannel(name) }
        if Set(channels).count != channels.count { throw ValidationError("--channel names a channel twice") }
        if release != nil, channels.count > 1 { throw ValidationError("--release names a release of one channel: give one --channel with it") }
        guard (output == nil) != (outDir == nil) else { throw ValidationError("give one of --output FILE and --out-dir DIR") }
        if json, output == "-" { throw ValidationError("--json and --output - would both write to standard output") }
        if firstInstall, from.isEmpty { throw ValidationError("--first-install adds to --from; without --from a bundle is a first install already") }
    }

    func run() async throws {
        let started = FileSystem.monotonic()
        let http = HTTPSource.isHTTP(self.source) ? try httpSource() : nil
        let source: any Destination = try http ?? remoteOptions.open(self.source)
        let state = try http?.state(channel: channels[0], routesName: remoteOptions.routesName)
            ?? RemoteState.read(source, channel: channels[0], routesName: remoteOptions.routesName)
        var states = [state]
        for name in channels.dropFirst() {
            states.append(try http?.state(channel: name, routesName: remoteOptions.routesName)
                ?? RemoteState.read(source, channel: name, routesName: remoteOptions.routesName, listing: state.objects))
        }
        var records: [ReleaseRecord] = []
        for name in state.channels.sorted() {
            if let known = states.first(where: { $0.channel == name }) { records += known.records; continue }
            records += try RemoteState.records(in: source, objects: state.objects, channel: name)
        }
        var bases: [BundlePlan.Base] = []
        for selector in from { bases.append(try BundleSelection.base(selector, records: records, in: source, objects: state.objects)) }
        var plans: [BundlePlan] = []
        for channelState in states {
            let (head, headBytes) = try BundleSelection.release(channelState, release)
            let parts = try StoredRelease.parts(of: head, from: source)
            plans.append(try BundlePlan(head: head, headBytes: headBytes, headKey: channelState.headKey, parts: parts, bases: bases,
                                        firstInstall: from.isEmpty || firstInstall))
        }
        let plan = plans[0]
        let head = (version: plan.release.version, table: plan.release.table)
        // Over HTTP nothing lists sizes: what the plans name is fetched first, into a folder that then stands for the remote.
        let mirror = http.map { _ in FileSystem.join(ProcessEnvironment()["TMPDIR"] ?? "/tmp", "cenarius-bundle-\(getpid())") }
        defer { if let mirror { FileSystem.removeTree(mirror) } }
        var listing = state.objects
        if let http, let mirror { listing = try http.mirror(plans.flatMap(\.objects), into: mirror) }
        let writer = BundleWriter(source: mirror.map { FolderDestination(root: $0) } ?? source, plans: plans, created: Int64(FileSystem.now()))
        let members = try writer.members(listing: listing)
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
        let summary = Summary(bundle: written, channel: channels[0], channels: channels, version: head.version, release: plan.release.release, table: head.table,
                              from: plan.release.from, firstInstall: plan.release.firstInstall, members: members.count + 1, bytes: total,
                              seconds: FileSystem.monotonic() - started)
        if json { Output.json(summary); return }
        guard output != "-" else { return }
        let whom = (summary.from.isEmpty ? [] : ["devices on " + summary.from.map { String($0.prefix(12)) }.joined(separator: ", ")])
            + (summary.firstInstall ? ["a first install"] : [])
        let carried = plans.map { "release \($0.release.release ?? String($0.release.version)) of channel \($0.release.channel) (version \($0.release.version))" }
        Output.line("bundled \(carried.joined(separator: ", ")) for \(whom.joined(separator: " and ")): "
            + "\(summary.members) members, \(Output.bytes(total)) in \(written), \(Output.seconds(summary.seconds))")
    }
}
