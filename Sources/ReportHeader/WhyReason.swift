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
