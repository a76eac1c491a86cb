import Publishing
import RouteSync

extension Publication {
    /// The signer a republish (halt, resume, rollback, promote) signs with: the channel's head
    /// publishes key rotations and a signature lifetime that devices still follow, and a republish
    /// that dropped them would strand every device that trusts only the old key, exactly when an
    /// emergency halt or rollback must reach it. Kept unless `--rotation` or `--expires` say otherwise.
    func inheritedSigner() throws -> ReleaseSigner? {
        guard var signer = try releaseOptions.signer() else { return nil }
        guard let previous = previousSignature else { return signer }
        if releaseOptions.expires == nil, let signedAt = previous.signedAt, let expires = previous.expires {
            let (lifetime, overflow) = expires.subtractingReportingOverflow(signedAt)
            // The origin's numbers: a lifetime `--expires` would not take is signed anew on purpose only.
            guard !overflow, lifetime > 0, DurationText.seconds(String(lifetime)) != nil else {
                throw CenariusError.usage("the head of channel \(channel) holds signing and expiry times whose lifetime cannot be carried over: pass --expires")
            }
            signer.lifetime = lifetime
        }
        if releaseOptions.rotation.isEmpty, let last = previous.rotations.last {
            let keys = try signer.keys.map { path throws(CenariusError) in TableSignature.keyID(of: try SigningKeys.readPrivate(path)) }
            guard keys.contains(last.toID) else {
                throw CenariusError.usage("the head of channel \(channel) publishes key rotations that end at key \(last.toID), which no --sign-key is: "
                    + "sign with that key, or pass --rotation with the statements that lead to yours")
            }
            signer.rotations = previous.rotations
        }
        return signer
    }

    /// The signature devices follow now: the head's, else (a remote from before heads) the sidecar's.
    private var previousSignature: TableSignature? {
        let source = state.headKey
        if let bytes = state.head?.signature, let parsed = try? TableSignature.parse(bytes, source: source) { return parsed }
        return state.sidecar.flatMap { try? TableSignature.parse($0, source: state.routesName + ".sig") }
    }
}
