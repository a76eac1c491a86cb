import ResourceCache

/// How `serve` proves a release and whom it tells (G9): `--confirm-timeout`, `--health-cmd`,
/// `--health-url`, `--on-switch`.
package struct TrialOptions: Sendable, Equatable {
    package var confirmTimeout: Double?
    package var healthCommand: String?
    package var healthURL: String?
    package var onSwitch: String?
    /// `--hook-timeout`: seconds an `--on-switch` command may run before it is killed with its
    /// children. (`--health-cmd` has the trial's deadline.)
    package var hookTimeout: Double

    package static let defaultHookTimeout: Double = 30

    package init(confirmTimeout: Double? = nil, healthCommand: String? = nil, healthURL: String? = nil, onSwitch: String? = nil,
                 hookTimeout: Double = TrialOptions.defaultHookTimeout) {
        self.confirmTimeout = confirmTimeout
        self.healthCommand = healthCommand
        self.healthURL = healthURL
        self.onSwitch = onSwitch
        self.hookTimeout = hookTimeout
    }

    /// nil when no option asks for trials: every switch is confirmed at once.
    var policy: ReleaseMachine.Policy? {
        let health = healthCommand != nil || healthURL != nil
        guard confirmTimeout != nil || health else { return nil }
        return .init(confirmTimeout: confirmTimeout ?? ReleaseMachine.Policy.defaultTimeout, healthCheck: health)
    }
}
