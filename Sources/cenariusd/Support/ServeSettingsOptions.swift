import ArgumentParser

/// `serve`'s settings of the table (`Settings.serve`): the daemon's own, which `config` shows too.
struct ServeSettingsOptions: ParsableArguments {
    @Option(help: .setting("confirm-timeout")) var confirmTimeout: Double?
    @Option(help: .setting("health-cmd")) var healthCmd: String?
    @Option(help: .setting("health-url")) var healthUrl: String?
    @Option(help: .setting("on-switch")) var onSwitch: String?
    @Option(help: .setting("hook-timeout")) var hookTimeout: Double?
    @Option(help: .setting("start-jitter")) var startJitter: Double?
    @Option(help: .setting("report-url")) var reportUrl: String?

    func validate() throws { try SettingFlags.validate(flagValues) }

    var flagValues: [String: String] { SettingFlags.values(of: self) }
}
