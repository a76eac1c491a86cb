import DeviceSettings
import ArgumentParser
import Daemon
import Publishing
import ResourceCache
import RouteSync

struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Make the last confirmed generation current again (atomic).",
        discussion: """
            For an operator who shipped a bad build. A release on trial goes back to the confirmed \
            one; a confirmed release to the confirmed one before it (never to a release that failed). \
            The table rolled back from is not applied again by later syncs until the remote publishes \
            a different one. With a daemon serving the cache, the daemon makes the switch. Refused \
            while a hold is active. `status` lists the generations.

            A publisher takes a channel's release back with DEST: `rollback --channel C DEST` \
            republishes the channel's previous release (or --to VERSION) under a new version, and \
            devices move back as to a new release. `releases DEST` lists the versions.

            Example:
              cenariusd rollback --cache /var/cache/cenarius
              cenariusd rollback --channel default s3://assets/app --sign-key release.key
            """)

    @Flag(help: "Print one JSON object.") var json = false
    @Argument(help: ArgumentHelp("Publishers: the remote whose channel goes back (a folder, file:///PATH or s3://BUCKET/PREFIX).", valueName: "dest"))
    var destination: String?
    @Option(name: .customLong("to"), help: ArgumentHelp("Publishers: the version to go back to (default: the release before the current one).", valueName: "version"))
    var toVersion: Int64?
    @OptionGroup var republish: RepublishOptions
    @OptionGroup var store: StoreOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if destination == nil, toVersion != nil || !republish.signKey.isEmpty || republish.dryRun {
            throw ValidationError("--to, --sign-key and --dry-run take a channel back on a remote: give DEST")
        }
    }

    func run() async throws {
        if let destination {
            try rollBackChannel(destination)
            return
        }
        let settings = try await global.resolved()
        let result: Rollback.Result
        if let daemon = Daemon.running(cache: settings.sync.cache) {
            // The daemon owns the release state (and may be mid-trial): it makes the switch.
            let answer = try DaemonControl.post(daemon, "/_cenarius/rollback", json: "{}")
            guard let from = answer.from else { throw CenariusError.internal("the daemon's rollback answer names no generation") }
            result = Rollback.Result(from: from, to: answer.to)
        } else {
            result = try LocalRelease.rollback(settings: settings.sync)
        }
        if json { Output.json(result) } else { Output.line("generation \(result.to.map(String.init) ?? "preset") is current again (rolled back from \(result.from))") }
    }
}

extension RollbackCommand {
    /// The publisher's rollback: the channel's previous release (by its records) at its head again.
    func rollBackChannel(_ destination: String) throws {
        let channel = global.channel ?? ReleaseHead.defaultChannel
        try ReleaseHead.checkChannel(channel)
        let remote = try store.open(destination, cacert: global.cacert)
        try PublishLocking.run(remote, dryRun: republish.dryRun) { lock in try rollBack(channel, of: remote, lock: lock) }
    }

    private func rollBack(_ channel: String, of remote: any Destination, lock: (any PublishLock)?) throws {
        let state = try RemoteState.read(remote, channel: channel, routesName: global.routesName ?? "Routes.json")
        guard let current = state.head else { throw CenariusError.notFound("channel \(channel) of \(remote.description) has no head: nothing to roll back") }
        let earlier = state.records.filter { $0.head.version < current.version }
        let target: ReleaseRecord?
        if let toVersion {
            target = state.records.first { $0.head.version == toVersion }
            guard target != nil else { throw CenariusError.notFound("channel \(channel) has no release \(toVersion) (cenariusd releases \(remote.description) lists them)") }
        } else {
            // The newest earlier release of another table: a halt or a resume is not a release to go back to.
            target = earlier.last { $0.head.table != current.table }
        }
        guard let target else { throw CenariusError.notFound("channel \(channel) has no release before version \(current.version) to go back to") }
        try Republish(remote: remote, state: state, options: republish)
            .run(target.head, manifest: target.head.release, origin: "rollback to \(target.head.version)", action: "rolled back to version \(target.head.version)",
                 json: json, lock: lock)
    }
}
