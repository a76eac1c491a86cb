import RouteSync

/// `status`'s view of signing (G8): the signed table in force, whether it expired, whether the
/// device's clock looks wrong, and which keys this device trusts after its rotations.
package struct SignatureStatus: Sendable, Codable, Equatable {
    package var version: Int64?
    /// Unix seconds, when the sidecar said.
    package var signedAt: Double?
    package var expires: Double?
    /// The signature of the table in force expired: a mirror may be frozen or replaying.
    package var expired: Bool
    /// For people, when the table was signed in this device's future.
    package var clock: String?
    package var trustedKeys: [String]
    package var retiredKeys: [String]

    /// How far in the device's future a signing time must be before the clock is called wrong:
    /// publishers' and devices' clocks differ by seconds, not minutes.
    static let clockSlack = 300.0

    static func read(_ settings: SyncSettings, meta: GenerationMeta?) -> SignatureStatus? {
        guard let verifier = settings.tableVerifier else { return nil }
        let now = settings.rollout.now()
        let state = (try? TrustStore(layout: settings.cache).read()) ?? TrustState()
        let trusted = TrustedKeys(configured: verifier.keys, state: state)
        var status = SignatureStatus(version: meta?.signedVersion, signedAt: meta?.signedAt.map(Double.init),
                                     expires: meta?.signatureExpires.map(Double.init), expired: false, clock: nil,
                                     trustedKeys: trusted.ids, retiredKeys: state.retired)
        if let expires = status.expires { status.expired = expires <= now }
        if let signedAt = status.signedAt, signedAt > now + clockSlack {
            status.clock = "the table in force was signed at \(UTCTime.text(signedAt)), \(Int(signedAt - now)) s after this device's clock: the clock looks wrong (expiry is judged by it)"
        }
        return status
    }
}
