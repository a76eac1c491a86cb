import RouteSync
import Settings

/// What the command tree cannot tell about itself: exit codes, environment, files, the configuration
/// file's rules. The one place these texts live; every page that has such a section takes it from here.
enum Reference {
    /// Exhaustive over the codes the program exits with, so a new code cannot go undocumented.
    static func meaning(_ code: CenariusError.Code) -> String {
        switch code {
        case .ok: "done."
        case .internal: "an unexpected internal error (a bug)."
        case .notFound: "not found: the uri is not in the table, or not in the develop folder."
        case .remote: "the remote failed: origin down, HTTP or TLS error, timeout; or nothing current could be had with --strict."
        case .integrity: "integrity: hash mismatch, invalid table, bad signature; or --check found a difference."
        case .storage: "local storage: no space, permission, lock held too long, corrupt cache, a second daemon on one cache."
        case .usage: "usage: a bad flag, environment variable, configuration file key or value."
        }
    }

    static let exitStatusIntroduction =
        "A failure is one line on standard error (cenariusd: error: what, where, why). The daemon's control API reports the same code and name in its error envelope (error, desc)."

    /// The variable of each setting comes from the settings table; this says how its value is read.
    static func environmentText(for setting: Setting) -> String {
        let base = "As \(setting.flag)"
        switch (setting.kind, setting.key) {
        case (.list, "remote"): return base + "; several URLs separated by white space."
        case (.list, _): return base + "; one value per line."
        case (.bool, _): return base + ": 1, true, yes or on; 0, false, no or off."
        default: return base + "."
        }
    }

    /// Variables read besides the settings' own.
    static let environment: [(name: String, text: String)] = [
        ("CENARIUS_CONFIG", "The configuration file, as --config."),
        ("CENARIUS_TOKEN", "serve: the bearer token required on POSTs, as --token."),
        ("XDG_CACHE_HOME", "The default cache is $XDG_CACHE_HOME/cenarius (~/.cache/cenarius when unset)."),
        ("XDG_CONFIG_HOME", "The default configuration file is $XDG_CONFIG_HOME/cenarius/config.json (~/.config when unset), read when it exists."),
        ("HOME", "The default develop folder is $HOME/Documents/www."),
        ("NOTIFY_SOCKET", "serve: set by systemd for a Type=notify service; the daemon sends READY=1 once it serves, RELOADING=1 and READY=1 around a reload, STOPPING=1, and each sync's outcome as STATUS=."),
        ("WATCHDOG_USEC", "serve: set by systemd for a unit with WatchdogSec=; the daemon sends WATCHDOG=1 at half this period only while its event loop and its sync scheduler are alive."),
        ("JOURNAL_STREAM", "serve: set by systemd when stderr goes to the journal; each log line then starts with its syslog priority (<3> to <7>), so that journalctl -p filters by level."),
    ]

    /// Variables the daemon sets for the commands it runs.
    static let hookEnvironment: [(name: String, text: String)] = [
        ("CENARIUS_GENERATION", "For --health-cmd and --on-switch: the generation switched to (0: the preset)."),
        ("CENARIUS_PREVIOUS", "For --on-switch: the generation switched from."),
        ("CENARIUS_REASON", "For --on-switch: why (committed, timeout, health, manual)."),
    ]

    /// The paths of the Debian package (scripts/deb.sh) and the defaults of a user's run.
    static let files: [(path: String, text: String)] = [
        ("/etc/cenarius/config.json", "The configuration file of the packaged service (CENARIUS_CONFIG in its unit); see cenarius-config(5)."),
        ("$XDG_CONFIG_HOME/cenarius/config.json", "The configuration file read by default, when it exists."),
        ("/var/cache/cenarius", "The packaged service's cache (CacheDirectory= of its unit; with DynamicUser= a link to /var/cache/private/cenarius). Removed when the package is purged."),
        ("$XDG_CACHE_HOME/cenarius", "The cache used by default."),
        ("/usr/lib/systemd/system/cenariusd.service", "The systemd unit: cenariusd serve as a notify service with a watchdog, not enabled on install (systemctl enable --now cenariusd)."),
        ("/etc/machine-id", "This device's id for staged rollouts, unless --device-id is given."),
    ]

    static let seeAlso = ["cenarius-config(5)", "systemctl(1)", "journalctl(1)", "systemd.service(5)"]

    /// cenarius-config(5)'s description, paragraph by paragraph.
    static let configDescription = [
        "cenariusd reads its shared options, and serve's trial, hook and report options, from a JSON file: one object whose keys are the options' long names without the dashes. A flag wins over its CENARIUS_ variable, which wins over the file, which wins over the default.",
        "The file is --config (CENARIUS_CONFIG); without either, $XDG_CONFIG_HOME/cenarius/config.json when it exists. The packaged service reads /etc/cenarius/config.json, installed holding an empty object: every option at its default. Set remote (and preset, the folder the app ships with) before enabling the service.",
        "A key cenariusd does not know, a value of the wrong type or a number out of its range is a usage error (exit 64) naming it, never a setting silently ignored. A running daemon reads the file again on SIGHUP (systemctl reload cenariusd).",
    ]

    /// cenarius-config(5)'s example; the generator refuses to write the page unless the program's own
    /// reader accepts it, so the example cannot drift from what cenariusd takes.
    static let configExample = """
        {
          "remote": ["https://cdn.example.com/app/www", "https://mirror.example.com/app/www"],
          "preset": "/opt/app/www",
          "public-key": "/etc/cenarius/release.pub",
          "confirm-timeout": 120,
          "health-url": "http://127.0.0.1:8080/health"
        }
        """
}
