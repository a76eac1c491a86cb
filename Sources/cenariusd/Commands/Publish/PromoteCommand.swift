import ArgumentParser
import Publishing
import RouteSync

struct PromoteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promote",
        abstract: "Put the release a channel serves on another channel of the same remote (publishers).",
        discussion: """
            The exact release — the same table bytes, the same store objects, the same manifest — \
            under a new version of the target channel, signed anew with --sign-key. Only the head \
            (and, to the default channel, the Cenarius layout's changed files) is uploaded.

            Example:
              cenariusd promote --from beta --to default s3://assets/app --sign-key release.key
            """)

    @Option(help: ArgumentHelp("The channel whose current release is promoted.", valueName: "channel")) var from: String
    @Option(help: ArgumentHelp("The channel it is put on.", valueName: "channel")) var to: String
    @Argument(help: ArgumentHelp("The remote: a folder, file:///PATH or s3://BUCKET/PREFIX.", valueName: "dest")) var destination: String
    @OptionGroup var republish: RepublishOptions
    @OptionGroup var remoteOptions: DestinationOptions
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        try ReleaseHead.validateChannel(from, option: "--from")
        try ReleaseHead.validateChannel(to, option: "--to")
        guard from != to else { throw ValidationError("--from and --to name the same channel") }
    }

    func run() async throws {
        let remote = try remoteOptions.open(destination)
        try PublishLocking.run(remote, dryRun: republish.dryRun) { lock in
            let source = try RemoteState.read(remote, channel: from, routesName: remoteOptions.routesName, records: 0)
            guard let head = source.head else { throw CenariusError.notFound("channel \(from) of \(remote.description) has no head: nothing to promote") }
            let target = try RemoteState.read(remote, channel: to, routesName: remoteOptions.routesName, records: 6)
            if let current = target.head, current.table == head.table, current.release == head.release {
                Output.line("channel \(to) already serves the release of \(from) (version \(current.version)); nothing uploaded")
                return
            }
            try Republish(remote: remote, state: target, options: republish)
                .run(head, manifest: head.release, origin: "promote from \(from) \(head.version)", action: "promoted from \(from) version \(head.version)",
                     json: json, lock: lock)
        }
    }
}

/// What `halt` and `resume` take: the channel, the remote, and how to sign the new head.
struct HaltTarget: ParsableArguments {
    @Option(help: ArgumentHelp("The channel.", valueName: "channel")) var channel: String = ReleaseHead.defaultChannel
    @Argument(help: ArgumentHelp("The remote: a folder, file:///PATH or s3://BUCKET/PREFIX.", valueName: "dest")) var destination: String
    @OptionGroup var republish: RepublishOptions
    @OptionGroup var remoteOptions: DestinationOptions
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        try ReleaseHead.validateChannel(channel)
    }

    /// The rollout's halt (G10) set or cleared in the channel's head, as a new version.
    func setHalt(_ halted: Bool) throws {
        let halting = Halting(remote: try remoteOptions.open(destination), channel: channel, routesName: remoteOptions.routesName, options: republish)
        switch try halting.set(halted, origin: halted ? "halt" : "resume", quiet: json) {
        case .already(let version):
            Output.line("the rollout of channel \(channel) is \(halted ? "already halted" : "not halted") (version \(version)); nothing uploaded")
        case .moved:
            break
        case .republished(let summary):
            if json { Output.json(summary) } else { Output.line(summary.sentence) }
        }
    }
}

struct HaltCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "halt",
        abstract: "Halt the rollout of a channel's release: devices that have not switched stay where they are (publishers).",
        discussion: """
            Republishes the channel's release with "halted": true in its manifest, under a new \
            version. `cenariusd resume` lifts it. `fleet --halt-above` decides it from the fleet's reports.

            Example:
              cenariusd halt --channel default s3://assets/app --sign-key release.key
            """)

    @OptionGroup var target: HaltTarget

    func run() async throws { try target.setHalt(true) }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Lift the halt of a channel's rollout (publishers).",
        discussion: """
            Example:
              cenariusd resume --channel default s3://assets/app --sign-key release.key
            """)

    @OptionGroup var target: HaltTarget

    func run() async throws { try target.setHalt(false) }
}
