import Crypto

/// Whether this device adopts a release now (G10), decided on the device from the manifest
/// alone, with no server that knows the fleet.
package enum RolloutGate {
    /// What the device knows of itself.
    package struct Device: Sendable, Equatable {
        package var id: String
        /// nil: the host did not say (`--native-version`); a release that requires a version is
        /// then never adopted, since compatibility cannot be shown.
        package var native: NativeVersion?

        package init(id: String, native: NativeVersion?) {
            self.id = id
            self.native = native
        }
    }

    package enum Decision: Sendable, Equatable {
        case adopt
        /// Not this device's moment yet (`start + place × duration`).
        case wait(until: Double)
        /// The rollout is halted and this device had not switched.
        case halted
        /// The host does not meet `requires`; never adopted.
        case incompatible(String)

        /// The word `status` and the `deferred` event use.
        package var reason: String {
            switch self {
            case .adopt: "adopt"
            case .wait: "time"
            case .halted: "halted"
            case .incompatible: "compatibility"
            }
        }
    }

    /// The device's place in [0, 1): the first 64 bits of SHA-256 of its id and the release name,
    /// so that places are uniform over a fleet, stable for a device within a release, and each
    /// release picks a different first group.
    package static func place(deviceID: String, release: String) -> Double {
        let digest = Array(SHA256.hash(data: Array("\(deviceID)\n\(release)".utf8)))
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        // 53 bits: exactly representable, and strictly below 1.
        return Double(value >> 11) / Double(UInt64(1) << 53)
    }

    /// Finite and below 2e18 whatever the manifest said: its numbers were checked at the edge.
    package static func moment(_ rollout: ReleaseManifest.Rollout, place: Double) -> Double {
        rollout.start.adding(Seconds(exactly: place * rollout.duration.value) ?? rollout.duration)
    }

    /// `release`: the manifest's name, or a stand-in when it has none (the table's fingerprint).
    package static func decide(_ manifest: ReleaseManifest, release: String, device: Device, now: Double) -> Decision {
        if let required = manifest.requiresNative {
            guard let native = device.native else {
                return .incompatible("requires native \(required), and this host's version is not known (--native-version)")
            }
            if native < required { return .incompatible("requires native \(required), have \(native)") }
        }
        guard let rollout = manifest.rollout else { return .adopt }
        if rollout.halted { return .halted }
        let at = moment(rollout, place: place(deviceID: device.id, release: release))
        // A device that was offline past its moment adopts at its next poll.
        return now >= at ? .adopt : .wait(until: at)
    }
}
