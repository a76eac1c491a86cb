import Publishing
import RouteSync

extension Publication {
    /// The options a republish (halt, resume, rollback, promote) signs with: the channel's head
    /// publishes key rotations and a signature lifetime that devices still follow, and a republish
    /// that dropped them would strand every device that trusts only the old key, exactly when an
    /// emergency halt or rollback must reach it. Kept unless `--rotation` or `--expires` say
    /// otherwise; the statements are handed to `routes` as files in the staging folder.
    func inheritedTrust(in staging: Staging) throws -> ReleaseOptions {
        var options = releaseOptions
        guard !options.signKey.isEmpty, let previous = previousSignature else { return options }
        if options.expires == nil, let signedAt = previous.signedAt, let expires = previous.expires {
            let (lifetime, overflow) = expires.subtractingReportingOverflow(signedAt)
            // The origin's numbers: a lifetime `routes` would not take is signed anew on purpose only.
            guard !overflow, lifetime > 0, RoutesCommand.seconds(String(lifetime)) != nil else {
                throw CenariusError.usage("the head of channel \(channel) holds signing and expiry times whose lifetime cannot be carried over: pass --expires")
            }
            options.expires = String(lifetime)
        }
        if options.rotation.isEmpty, let last = previous.rotations.last {
            let keys = try options.signKey.map { path throws(CenariusError) in TableSignature.keyID(of: try SigningKeys.readPrivate(path)) }
            guard keys.contains(last.toID) else {
                throw CenariusError.usage("the head of channel \(channel) publishes key rotations that end at key \(last.toID), which no --sign-key is: "
                    + "sign with that key, or pass --rotation with the statements that lead to yours")
            }
            options.rotation = try previous.rotations.enumerated().map { n, rotation throws(CenariusError) in
                let path = staging.root + "/rotation-\(n).json"
                try FileSystem.writeAtomically(rotation.serialized(), to: path, durable: false)
                return path
            }
        }
        return options
    }

    /// The signature devices follow now: the head's, else (a remote from before heads) the sidecar's.
    private var previousSignature: TableSignature? {
        let source = state.headKey
        if let bytes = state.head?.signature, let parsed = try? TableSignature.parse(bytes, source: source) { return parsed }
        return state.sidecar.flatMap { try? TableSignature.parse($0, source: state.routesName + ".sig") }
    }
}
