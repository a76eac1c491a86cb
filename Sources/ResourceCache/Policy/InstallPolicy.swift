package import RouteSync

#if canImport(Glibc)
import Glibc
#endif

/// When a device downloads a release and when it switches to it (`serve --download-window`,
/// `--metered`, `--switch-window`, `--switch-at`, `--inhibit-file`; docs/install-policies.md):
/// two decisions, each a pure function of the device's clock and state. Neither ever delays a
/// failed trial's rollback, which does not pass through them; holds, gates and a halted rollout
/// keep their meaning.
package struct InstallPolicy: Sendable {
    package enum Metered: Sendable, Equatable {
        /// Downloads wait while the link is metered.
        case `defer`
        case allow
        /// A release whose transfer stays under this many bytes downloads anyway.
        case small(Int64)

        package init(_ text: String) throws(CenariusError) {
            switch text {
            case "defer": self = .defer
            case "allow": self = .allow
            default:
                guard text.hasPrefix("small:"), let bytes = ByteSize.parse(text.dropFirst(6)) else {
                    throw .usage("--metered must be defer, allow or small:SIZE (like small:5M)")
                }
                self = .small(bytes)
            }
        }
    }

    /// Who asked for the switch a sync may make.
    package enum Switching: Sendable, Equatable {
        /// The timer's or a lookup's sync.
        case scheduled
        /// The daemon's first sync after it started (`--switch-at start`).
        case start
        /// `POST /_cenarius/switch`: the app asks (`--switch-at start` is met).
        case request
        /// `{"force": true}` or `cenariusd switch`: windows and inhibit files are overridden, holds and gates are not.
        case force
    }

    /// A release waits: the deferral's reason (a why code), what it waits for, and until when if known.
    package struct Wait: Sendable, Equatable {
        package var reason: String
        package var detail: String
        package var until: Double?
    }

    package var downloadWindows: [TimeWindow] = []
    package var metered: Metered = .allow
    /// Exists: the link is metered (when NetworkManager does not say).
    package var meteredFile: String?
    /// NetworkManager's answer (nil: it does not run or does not know), asked once per sync.
    package var meteredProbe: (@Sendable () -> Bool?)?
    package var switchWindows: [TimeWindow] = []
    package var switchAtStart = false
    package var inhibitFiles: [String] = []

    package init() {}

    package var isDefault: Bool {
        downloadWindows.isEmpty && metered == .allow && switchWindows.isEmpty && !switchAtStart && inhibitFiles.isEmpty
    }

    /// Whether the link is metered now, and who said so.
    package func meteredNow() -> (metered: Bool, source: String) {
        if let answer = meteredProbe?() { return (answer, "NetworkManager") }
        if let meteredFile { return (FileSystem.exists(meteredFile), meteredFile) }
        return (false, "assumed")
    }

    /// nil: download now. `bytes`: what the release's transfer is expected to cost (nil: unknown,
    /// a table without sizes), 0 when it is already downloaded.
    package func download(now: Double, bytes: Int64?) -> Wait? {
        if bytes == 0 { return nil }
        if let until = downloadWindows.closedUntil(now) {
            return Wait(reason: "download-window", detail: "downloads wait for a window (" + downloadWindows.map(\.description).joined(separator: ", ") + ")", until: until)
        }
        switch metered {
        case .allow: return nil
        case .defer, .small:
            let link = meteredNow()
            guard link.metered else { return nil }
            if case .small(let limit) = metered, let bytes, bytes <= limit { return nil }
            let size = bytes.map { "\($0) bytes" } ?? "unknown size (the table gives no sizes)"
            let what = if case .small(let limit) = metered { "a transfer of \(size), over the \(limit) allowed," } else { "downloads" }
            return Wait(reason: "metered", detail: "the link is metered (\(link.source)): \(what) wait for an unmetered one", until: nil)
        }
    }

    /// nil: switch now.
    package func `switch`(now: Double, switching: Switching) -> Wait? {
        if switching != .force {
            if let inhibitor = inhibitFiles.first(where: FileSystem.exists) {
                return Wait(reason: "inhibited", detail: "\(inhibitor) exists: switches wait until it is gone", until: nil)
            }
            if let until = switchWindows.closedUntil(now) {
                return Wait(reason: "switch-window", detail: "the switch waits for a window (" + switchWindows.map(\.description).joined(separator: ", ") + ")", until: until)
            }
        }
        if switchAtStart, switching == .scheduled {
            return Wait(reason: "switch-at-start", detail: "staged: switches when the daemon next starts or the app asks (POST /_cenarius/switch)", until: nil)
        }
        return nil
    }
}

/// `5M`, `500K`, `1G` or plain bytes.
package enum ByteSize {
    package static func parse(_ text: some StringProtocol) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, let value = Int64(digits), value >= 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }
}
