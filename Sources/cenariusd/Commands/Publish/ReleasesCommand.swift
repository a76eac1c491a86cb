import ArgumentParser
import Publishing
import RouteSync

struct ReleasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "releases",
        abstract: "List a remote's channels and what each published, newest first (publishers).",
        discussion: """
            From the remote alone: each channel's head and the release records `publish`, \
            `promote`, `rollback`, `halt` and `resume` keep in the store.

            Example:
              cenariusd releases s3://assets/app
              cenariusd releases /srv/www --channel beta --json
            """)

    @Argument(help: ArgumentHelp("The remote: a folder, file:///PATH or s3://BUCKET/PREFIX.", valueName: "dest")) var destination: String
    @Option(help: ArgumentHelp("Only this channel.", valueName: "channel")) var channel: String?
    @OptionGroup var remoteOptions: DestinationOptions
    @Flag(help: "Print one JSON object.") var json = false

    struct Release: Encodable {
        var version: Int64
        var published: Double
        var origin: String
        var release: String?
        var table: String
        var files: Int
        var bytes: Int64
        var signedBy: [String]
        var expires: Int64?
        var rollout: String
        /// What the head serves now.
        var current: Bool
        /// Written by a publish that did not reach its head (killed, or still running).
        var incomplete: Bool
    }

    struct Listing: Encodable {
        var destination: String
        var channels: [Channel]
    }

    struct Channel: Encodable {
        var name: String
        var head: String
        var version: Int64?
        var releases: [Release]
    }

    func run() async throws {
        let remote = try remoteOptions.open(destination)
        let all = try RemoteState.read(remote, channel: ReleaseHead.defaultChannel, routesName: remoteOptions.routesName)
        var channels: [Channel] = []
        for name in all.channels.sorted() where channel == nil || channel == name {
            let state = name == all.channel ? all : try RemoteState.read(remote, channel: name, routesName: remoteOptions.routesName, listing: all.objects)
            let current = state.head?.version
            let releases = state.records.reversed().map { record in
                let signature = record.head.signature.flatMap { try? TableSignature.parse($0, source: record.key) }
                let manifest = record.head.release.flatMap { try? ReleaseManifest.parse($0, source: record.key) }
                return Release(version: record.head.version, published: record.published, origin: record.origin, release: manifest?.release,
                               table: record.head.table, files: record.files, bytes: record.bytes, signedBy: signature?.signatures.map(\.keyID) ?? [],
                               expires: signature?.expires, rollout: Self.rollout(manifest),
                               current: record.head.version == current, incomplete: current.map { record.head.version > $0 } ?? true)
            }
            channels.append(Channel(name: name, head: state.headKey, version: current, releases: releases))
        }
        if let channel, channels.isEmpty { throw CenariusError.notFound("\(remote.description) has no channel \(channel)") }
        if json {
            Output.json(Listing(destination: remote.description, channels: channels))
            return
        }
        if channels.isEmpty { Output.line("\(remote.description): no releases published here yet (cenariusd publish BUILD --to \(destination))") }
        for channel in channels {
            Output.line("channel \(channel.name) (\(channel.head)): " + (channel.version.map { "version \($0)" } ?? "no head"))
            for release in channel.releases {
                let mark = release.current ? "*" : release.incomplete ? "!" : " "
                var parts = ["\(mark) \(release.version)", Output.timestamp(release.published), release.release ?? "-", "table \(release.table.prefix(12))",
                             "\(release.files) files", Output.bytes(release.bytes), release.rollout, release.origin]
                if !release.signedBy.isEmpty { parts.append("signed by " + release.signedBy.joined(separator: ", ")) }
                if release.incomplete { parts.append("(its publish did not finish)") }
                Output.line("  " + parts.joined(separator: "  "))
            }
        }
    }

    static func rollout(_ manifest: ReleaseManifest?) -> String {
        guard let rollout = manifest?.rollout else { return "rollout: all" }
        if rollout.halted { return "rollout: halted" }
        return rollout.duration == .zero ? "rollout: all" : "rollout: over \(Whole.text(rollout.duration.value)) s from \(Output.timestamp(Double(rollout.start.value)))"
    }
}
