import ArgumentParser
import Fleet
import Publishing
import RouteSync

#if canImport(Glibc)
import Glibc
#endif

struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Read the origin's access logs: how each release is doing across the fleet; halt a failing rollout.",
        discussion: """
            Every table request a device makes carries Cenarius-Report (its release, state and the \
            releases it rolled back or refused). With nginx logging them as JSON lines
              log_format cenarius escape=json '{"time":"$msec","report":"$http_cenarius_report"}';
            this command counts each device's latest report per release, on every core. Logs may be \
            gzip-rotated; an OpenStack Swift proxy's log is read as it is, and so are CloudFront \
            real-time logs, Cloudflare Logpush JSON, Amazon S3 server access logs and CloudFront \
            standard logs, where the report is the query parameter cenarius-report (--report-in query; \
            each file's format is told from its first lines). Malformed lines are counted and skipped. \
            A folder counts the reports devices wrote beside an offline bundle (docs/bundles.md) with the logs. \
            Where devices report peer=N, origin=M, the bytes they took from LAN peers and from the \
            origin are summed (the uplink bytes peers saved: docs/peers.md).

            With --halt-above, --min-devices and --remote it writes "halted": true into the remote's \
            release manifest when more than PERCENT of the devices that tried its release rolled it \
            back or refused it, out of at least N (re-signing it with --sign-key). Exit 0 whether or \
            not it halted; the output says which. Run it from cron or CI.

            Where the logs live in a warehouse, --sql ENGINE prints the query that makes the same \
            counts there (--view FORMAT: the view it reads), and --counts FILE reads its result \
            instead of logs, --halt-above included.

            Example:
              cenariusd fleet /var/log/nginx/cenarius.log*
              cenariusd fleet access.log.gz --since 24h --json
              cenariusd fleet /var/log/nginx/cenarius.log /media/stick
              cenariusd fleet /var/log/nginx/cenarius.log* --html fleet.html
              cenariusd fleet access.log --halt-above 20 --min-devices 50 --remote /srv/www --sign-key release.key
              cenariusd fleet --sql athena
              cenariusd fleet --counts result.csv --halt-above 20 --min-devices 50 --remote /srv/www
            """)

    @Argument(help: ArgumentHelp("Access logs (nginx or Fastly JSON lines, a Swift proxy's, S3 server access logs, CloudFront standard or real-time logs, Cloudflare Logpush; .gz read as it is), or folders of the reports devices left beside an offline bundle (a stick's root or its cenarius-reports/).", valueName: "log"))
    var logs: [String] = []

    @Option(help: ArgumentHelp("Print the SQL query that makes the same counts in a log warehouse (duckdb, clickhouse or athena), over cenarius_lines(unix_seconds, report): docs/fleet.md.", valueName: "engine"))
    var sql: FleetSQL.Engine?
    @Option(help: ArgumentHelp("With --sql: print instead the view that makes cenarius_lines from cenarius_log(line), a log's lines (nginx, s3, cloudfront, realtime or logpush).", valueName: "format"))
    var view: FleetSQL.Format?
    @Option(help: ArgumentHelp("Read the counts from this result of the --sql query (CSV or JSON) instead of logs; --halt-above works on them.", valueName: "file"))
    var counts: String?
    @Option(help: ArgumentHelp("Also write one self-contained page: devices per release over time, rollbacks and refusals over time, why devices are not on the newest release.", valueName: "file"))
    var html: String?

    @Option(help: ArgumentHelp("Only lines newer than this: 90s, 30m, 12h, 7d.", valueName: "duration")) var since: String?
    @Flag(help: "Print one JSON object.") var json = false
    @Option(help: ArgumentHelp("Halt the rollout when more than this share of the devices that tried its release gave it up.", valueName: "percent"))
    var haltAbove: Double?
    @Option(help: ArgumentHelp("Halt only on a sample of at least this many devices that tried the release.", valueName: "n"))
    var minDevices: Int = 20
    @Option(help: ArgumentHelp("The remote whose release --halt-above may halt: a folder, file:///PATH or s3://BUCKET/PREFIX (with the store options below).", valueName: "dest"))
    var remote: String?
    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("S3: trust this CA bundle for the store's TLS certificate.", valueName: "file"))
    var cacert: String?
    @Option(help: ArgumentHelp("Ed25519 private key: re-sign the table and the halted manifest (a signed remote; repeat it where several signatures are required).", valueName: "file"))
    var signKey: [String] = []
    @Option(help: ArgumentHelp("File name of the route table.", valueName: "name")) var routesName: String = "Routes.json"
    @Option(help: ArgumentHelp("Count at most this many devices (about 30 bytes each: 10,000,000 in about 300 MB); reports of any more are dropped and counted. Reports can be forged: docs/threats.md.", valueName: "n"))
    var maxDevices: Int = FleetTally.defaultMaxDevices
    @Option(help: ArgumentHelp("Threads that parse the logs (default: one per core, at most 8).", valueName: "n"))
    var threads: Int = FleetReading.cores

    func validate() throws {
        if sql != nil || counts != nil {
            guard logs.isEmpty else { throw ValidationError("--sql and --counts read no log: the warehouse reads them") }
            guard sql == nil || counts == nil else { throw ValidationError("--sql prints the query whose result --counts reads: one or the other") }
        } else if logs.isEmpty {
            throw ValidationError("give the access logs to read (or --sql ENGINE, or --counts FILE)")
        }
        if view != nil, sql == nil { throw ValidationError("--view goes with --sql ENGINE") }
        if html != nil, logs.isEmpty { throw ValidationError("--html draws from the logs: give them") }
        if let since, DurationText.seconds(since) == nil { throw ValidationError("--since must be a duration like 90s, 30m, 12h or 7d") }
        if let haltAbove {
            guard haltAbove >= 0, haltAbove < 100 else { throw ValidationError("--halt-above must be a percentage in [0, 100)") }
            guard remote != nil else { throw ValidationError("--halt-above needs --remote DEST (the folder or store whose release to halt)") }
        }
        guard minDevices >= 1 else { throw ValidationError("--min-devices must be at least 1") }
        guard maxDevices >= 1 else { throw ValidationError("--max-devices must be at least 1") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        // A halt rewrites the manifest, which a signed remote's sidecar covers: without a key
        // every device would refuse the remote from then on.
        if haltAbove != nil, let remote {
            do {
                if case .folder(let folder) = try DestinationAddress(remote) {
                    try RolloutHalt.checkKeys(signKey, sidecar: FileSystem.join(folder, routesName) + ".sig")
                }
            } catch { throw ValidationError(error.message) }
        }
    }

    struct Summary: Encodable {
        struct Release: Encodable {
            var release: String
            var devices, confirmed, trial, deferred, held, failed: Int
            /// Bytes its devices took from LAN peers and from the origin (docs/peers.md).
            var peerBytes: Int64 = 0, originBytes: Int64 = 0

            init(_ release: FleetTally.Release) {
                (self.release, devices, confirmed, trial, deferred, held, failed) =
                    (release.name, release.seen, release.confirmed, release.trial, release.deferred, release.held, release.failed)
                (peerBytes, originBytes) = (release.peerBytes, release.originBytes)
            }
        }
        struct Halt: Encodable {
            var release: String
            var tried, failed: Int
            var failedPercent: Double
            var halted: Bool
            var reason: String
        }
        var lines, devices, malformed, withoutReport: Int
        /// Report lines of devices beyond --max-devices, not counted.
        var droppedLines: Int
        var releases: [Release]
        /// Over every device's latest report: bytes from LAN peers (the uplink's saving) and from the origin.
        var peerBytes: Int64 = 0, originBytes: Int64 = 0
        /// Devices per `why` code (docs/why.md), by each device's latest report.
        var why: [String: Int] = [:]
        /// The devices not on the newest release, per code.
        var notOnNewest: NotOn?
        var halt: Halt?
        /// The file of `--counts`: the warehouse counted, no line was read here.
        var counts: String?

        struct NotOn: Encodable {
            var release: String
            var devices: Int
            var why: [String: Int]
        }
    }

    func run() async throws {
        if let sql { return Output.line(String((view.map { FleetSQL.view(of: $0, sql) } ?? FleetSQL.query(sql)).dropLast())) }
        if let counts { return try fromCounts(counts) }
        let now = FileSystem.now()
        var reading = FleetReading(threads: threads)
        if isatty(2) != 0 { reading.progress = FleetProgress.show }
        let tally = try await FleetProgress.onThread { [reading, logs, maxDevices, since, html] () throws(CenariusError) -> FleetTally in
            try reading.tally(logs, since: since.flatMap(DurationText.seconds).map { now - Double($0) }, maxDevices: maxDevices, timeline: html != nil)
        }
        if let html { try FileSystem.writeAtomically(Array(FleetPage.html(tally, timeline: tally.timeline()).utf8), to: html) }
        if reading.progress != nil { FleetProgress.clear() }
        var summary = Summary(
            lines: tally.lines, devices: tally.devices, malformed: tally.malformed, withoutReport: tally.withoutReport, droppedLines: tally.droppedLines,
            releases: tally.releases().map(Summary.Release.init), why: tally.whyCounts(),
            notOnNewest: tally.notOnNewest().map { .init(release: $0.release, devices: $0.devices, why: $0.why) })
        (summary.peerBytes, summary.originBytes) = (tally.totalBytes().peer, tally.totalBytes().origin)
        if let haltAbove, let remote {
            summary.halt = try rolloutHalt(remote).apply(HaltRule(percent: haltAbove, minDevices: minDevices), to: tally.releases())
            if tally.droppedLines > 0 { summary.halt?.reason += " (\(tally.droppedLines) report lines were not counted: see the warning)" }
        }
        if json { Output.json(summary) } else { print(summary) }
        if tally.droppedLines > tally.droppedForNames {
            Output.warn("\(tally.droppedLines - tally.droppedForNames) report lines of devices beyond the first \(tally.maxDevices) (--max-devices) were not counted: "
                + "the counts above are of those \(tally.maxDevices) devices only")
        }
        if tally.droppedForNames > 0 {
            Output.warn("\(tally.droppedForNames) report lines naming releases beyond the first \(FleetTally.maxNames) distinct names were not counted (forged reports?)")
        }
        if tally.malformed > 0 { Output.warn("\(tally.malformed) of \(tally.lines) lines were not access-log lines with a report (JSON, or an OpenStack Swift proxy's); skipped") }
    }

    func rolloutHalt(_ remote: String) -> RolloutHalt {
        RolloutHalt(remote: remote, routesName: routesName, signKeys: signKey) { [store, cacert] (text: String) throws(CenariusError) in
            try store.open(text, cacert: cacert)
        }
    }

    /// "held-back 3, current 1": most first.
    private static func counts(_ counts: [String: Int]) -> String {
        counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    func print(_ summary: Summary) {
        if let counts = summary.counts {
            Output.line("\(summary.devices) devices, as counted in \(counts)")
        } else {
            Output.line("\(summary.devices) devices in \(summary.lines) lines (\(summary.withoutReport) without a report)")
        }
        if !summary.why.isEmpty {
            Output.line("why: " + Self.counts(summary.why))
        }
        if let notOn = summary.notOnNewest, notOn.devices > 0 {
            Output.line("\(notOn.devices) device\(notOn.devices == 1 ? "" : "s") not on \(notOn.release), the newest: " + (notOn.why.isEmpty ? "no reason reported" : Self.counts(notOn.why)))
        }
        if !summary.releases.isEmpty {
            let rows = [["release", "devices", "confirmed", "trial", "deferred", "held", "rolled back/refused"]]
                + summary.releases.map { [$0.release] + [$0.devices, $0.confirmed, $0.trial, $0.deferred, $0.held, $0.failed].map(String.init) }
            let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                Output.line(zip(row, widths).enumerated().map { index, cell in
                    let pad = String(repeating: " ", count: cell.1 - cell.0.count)
                    return index == 0 ? cell.0 + pad : pad + cell.0
                }.joined(separator: "  "))
            }
        }
        if summary.peerBytes > 0 || summary.originBytes > 0 {
            Output.line(Self.savings("in all", summary.peerBytes, summary.originBytes))
            for release in summary.releases where release.peerBytes > 0 || release.originBytes > 0 {
                Output.line(Self.savings(release.release, release.peerBytes, release.originBytes))
            }
        }
        if let halt = summary.halt { Output.line(halt.reason) }
    }

    /// "in all: 84 MB from peers, 12 MB from the origin (87% of the bytes saved from the uplink)".
    private static func savings(_ what: String, _ peer: Int64, _ origin: Int64) -> String {
        let total = Double(peer) + Double(origin)
        let percent = total > 0 ? Int((Double(peer) / total * 100).rounded(.down)) : 0
        return "\(what): \(Output.bytes(peer)) from peers, \(Output.bytes(origin)) from the origin (\(percent)% of the bytes kept off the uplink)"
    }
}
