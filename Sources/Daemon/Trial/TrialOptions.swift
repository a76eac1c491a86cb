import ResourceCache

/// How `serve` proves a release and whom it tells (G9): `--confirm-timeout`, `--health-cmd`,
/// `--health-url`, `--on-switch`.
package struct TrialOptions: Sendable, Equatable {
    package var confirmTimeout: Double?
    package var healthCommand: String?
    package var healthURL: String?
    package var onSwitch: String?

    package init(confirmTimeout: Double? = nil, healthCommand: String? = nil, healthURL: String? = nil, onSwitch: String? = nil) {
        self.confirmTimeout = confirmTimeout
        self.healthCommand = healthCommand
        self.healthURL = healthURL
        self.onSwitch = onSwitch
    }

    /// nil when no option asks for trials: every switch is confirmed at once.
    var policy: TrialMachine.Policy? {
        let health = healthCommand != nil || healthURL != nil
        guard confirmTimeout != nil || health else { return nil }
        return .init(confirmTimeout: confirmTimeout ?? TrialMachine.Policy.defaultTimeout, healthCheck: health)
    }
}
