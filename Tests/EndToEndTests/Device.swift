import Foundation

/// One device as a user sets it up: its cache folder and, unless it uses the default, its preset
/// folder. It only builds the argument lists: every command still runs as the user types it
/// (`command` first, then the device's `--cache`/`--preset`), through `Binary`.
struct Device: Sendable {
    let cache: String
    let preset: String?

    init(cache: String, preset: String? = nil) {
        self.cache = cache
        self.preset = preset
    }

    /// The device whose folders are `cache` and `preset` in `dir`.
    init(in dir: Scratch) { self.init(cache: dir.path("cache"), preset: dir.path("preset")) }

    /// The device named `name` in `dir`: its folders are `name/cache` and `name/preset`.
    init(_ name: String, in dir: Scratch) { self.init(cache: dir.path(name + "/cache"), preset: dir.path(name + "/preset")) }

    /// `--cache` and `--preset`, for any of the device's commands.
    var flags: [String] { ["--cache", cache] + (preset.map { ["--preset", $0] } ?? []) }

    /// `command` (the subcommand and its own flags) on this device.
    func run(_ command: [String], environment: [String: String] = [:], killAfter: Double? = nil) throws -> Binary.Run {
        try Binary.run(command + flags, environment: environment, killAfter: killAfter)
    }

    /// `sync` with `flags` (the remote, keys and anything else).
    func sync(_ flags: [String], environment: [String: String] = [:]) throws -> Binary.Run {
        try run(["sync"] + flags, environment: environment)
    }

    /// What `resolve PATH --offline` names, read; its stderr where it names no file.
    func served(_ path: String = "index.html") throws -> String {
        let resolved = try run(["resolve", path, "--offline"])
        return (try? String(contentsOfFile: resolved.stdout.trimmingCharacters(in: .newlines), encoding: .utf8)) ?? resolved.stderr
    }

    /// Whether `verify` finds the cache whole.
    func verified() throws -> Bool { try run(["verify"]).status == 0 }

    /// `serve` on this device, following `remote` hourly (a test asks for the syncs it wants), with
    /// `options` (`--confirm-timeout` ...).
    func serve(remote: String, _ options: [String] = [], environment: [String: String] = [:]) throws -> DaemonProcess {
        try DaemonProcess(["--remote", remote] + (preset.map { ["--preset", $0] } ?? []) + ["--interval", "3600"] + options,
                          cache: cache, environment: environment)
    }
}
