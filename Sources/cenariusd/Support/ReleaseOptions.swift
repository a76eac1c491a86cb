import ArgumentParser
import Publishing
import RouteSync

/// What a release says of itself and who signs it: the options `routes` and `publish` share.
struct ReleaseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Ed25519 private key: also write Routes.json.sig (G8); repeatable, every key signs the same version.", valueName: "file")) var signKey: [String] = []
    @Option(help: ArgumentHelp("Version signed into the sidecar; must grow with every release (default: now in milliseconds, and always above the sidecar's previous version).", valueName: "n")) var tableVersion: Int64?
    @Option(help: ArgumentHelp("Signature: devices refuse the table this long after signing (90s, 30m, 12h, 7d).", valueName: "duration")) var expires: String?
    @Option(help: ArgumentHelp("Signature: publish a key rotation statement from keygen --rotate-from; repeatable, oldest first.", valueName: "file")) var rotation: [String] = []
    @Option(help: ArgumentHelp("Also write the release manifest Routes.json.release, naming the release (G10).", valueName: "name")) var release: String?
    @Option(help: ArgumentHelp("Manifest: the lowest host version the release runs on (compared numerically).", valueName: "version")) var requiresNative: String?
    @Option(help: ArgumentHelp("Manifest: when the rollout starts, unix seconds (default now when a duration is given).", valueName: "seconds")) var rolloutStart: Double?
    @Option(help: ArgumentHelp("Manifest: seconds over which the fleet adopts the release.", valueName: "seconds")) var rolloutDuration: Double?
    @Flag(help: "Manifest: halt the rollout (devices that have not switched stay where they are).") var halted = false
    @Flag(help: "Write an unsigned head over a signed channel on purpose (every device that holds a public key then refuses it).") var unsigned = false

    var manifestAsked: Bool { release != nil || requiresNative != nil || rolloutStart != nil || rolloutDuration != nil || halted }

    func validate() throws {
        if let rolloutDuration, Seconds(exactly: rolloutDuration) == nil {
            throw ValidationError("--rollout-duration must be a number of seconds from 0 to \(Whole.text(Seconds.limit))")
        }
        if let rolloutStart, UnixTime(exactly: rolloutStart) == nil {
            throw ValidationError("--rollout-start must be unix seconds from 0 to \(Whole.text(Seconds.limit))")
        }
        if let expires, DurationText.seconds(expires) == nil { throw ValidationError("--expires must be a duration such as 90s, 30m, 12h or 7d") }
        if signKey.isEmpty, expires != nil || !rotation.isEmpty { throw ValidationError("--expires and --rotation need --sign-key") }
        if unsigned, !signKey.isEmpty { throw ValidationError("--unsigned and --sign-key contradict each other") }
    }

    /// The manifest the options describe; nil when none was asked for.
    func manifest() throws(CenariusError) -> ReleaseManifest? {
        guard manifestAsked else { return nil }
        var manifest = ReleaseManifest(release: release)
        if let requiresNative { manifest.requiresNative = try NativeVersion(requiresNative) }
        if rolloutStart != nil || rolloutDuration != nil || halted {
            // Checked in validate(); the clock is ours.
            manifest.rollout = .init(start: UnixTime(exactly: rolloutStart ?? FileSystem.now().rounded(.down)) ?? 0,
                                     duration: rolloutDuration.flatMap(Seconds.init(exactly:)) ?? .zero, halted: halted)
        }
        return manifest
    }

    /// Who signs, as the options say; nil without --sign-key. The rotation statements are read
    /// and chained here, before anything is written.
    func signer() throws(CenariusError) -> ReleaseSigner? {
        guard !signKey.isEmpty else { return nil }
        var signer = ReleaseSigner(keys: signKey)
        signer.rotations = try ReleaseSigner.readRotations(rotation)
        signer.version = tableVersion
        signer.lifetime = expires.flatMap(DurationText.seconds)
        return signer
    }
}
