/// Why a device is or is not on a release (docs/why.md): one stable code. A code never changes
/// meaning once shipped; new situations get new codes.
package enum WhyReason: String, CaseIterable, Sendable, Codable {
    case current
    case notPolledYet = "not-polled-yet"
    case originUnreachable = "origin-unreachable"
    case originUnchanged = "origin-unchanged"
    case signature
    case integrity
    case heldBack = "held-back"
    case trial
    case deferredMoment = "deferred-moment"
    case deferredNative = "deferred-native"
    case halted
    case held
    case downloading
    case storage
    case lock
    case developMode = "develop-mode"
    /// Install policies (docs/install-policies.md): the download waits for a window or an unmetered link;
    case downloadWindow = "download-window"
    case metered
    /// the downloaded release waits for a switch window, an inhibit file to go, or the daemon's next start.
    case switchWindow = "switch-window"
    case inhibited
    case switchAtStart = "switch-at-start"

    /// What a person can do about it, for `why` on a terminal.
    package var advice: String {
        switch self {
        case .current: "nothing to do"
        case .notPolledYet: "run `cenariusd sync`, or wait for the daemon's first poll"
        case .originUnreachable: "check the remote's URL, the network and the origin; the next poll tries again by itself"
        case .originUnchanged: "publish the release, or wait for the CDN's copy to expire (see the evidence's staleUntil)"
        case .signature: "the publisher must sign the release again (a fresh --expires, a version past the one in force, a key this device trusts)"
        case .integrity: "the publisher must publish again: what the remote serves does not match its table"
        case .heldBack: "publish a newer release; this one failed its trial on this device"
        case .trial: "the app confirms the release (`cenariusd confirm`), or it is rolled back at the deadline"
        case .deferredMoment: "wait for this device's moment, or widen the rollout"
        case .deferredNative: "update the app that hosts the web assets, or publish a release it can run"
        case .halted: "the publisher resumes the rollout (`cenariusd resume --channel C DEST`)"
        case .held: "end the hold (DELETE /_cenarius/hold/ID) or let it expire"
        case .downloading: "wait: the download is under way"
        case .storage: "free space on the cache's file system, or fix its permissions"
        case .lock: "wait for the other process to finish, or stop it"
        case .developMode: "turn develop mode off to follow releases"
        case .downloadWindow: "wait for the download window, or change --download-window"
        case .metered: "connect to an unmetered network, or change --metered"
        case .switchWindow: "wait for the switch window, or `cenariusd switch`"
        case .inhibited: "remove the inhibit file, or `cenariusd switch --force`"
        case .switchAtStart: "restart the daemon, or `cenariusd switch`"
        }
    }

    /// `why`'s exit code: 0 only on the release; else the class of what stands in the way
    /// (3 the remote, 4 integrity, 5 local storage), 2 for a release not (yet) here.
    package var exitCode: Int32 {
        switch self {
        case .current: 0
        case .originUnreachable: 3
        case .signature, .integrity, .heldBack: 4
        case .storage, .lock: 5
        default: 2
        }
    }
}
