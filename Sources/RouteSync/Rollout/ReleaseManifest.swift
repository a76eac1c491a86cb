/// `<routes-name>.release` beside the table (G10): what a release requires of the host and how
/// fast the fleet adopts it. Every key is optional; unknown keys are ignored (forward compatible).
///
///     {"release": "2026.11-a", "requires": {"native": "2.3.0"},
///      "rollout": {"start": 1795400000, "duration": 86400, "halted": false}}
package struct ReleaseManifest: Sendable, Equatable {
    package struct Rollout: Sendable, Equatable {
        /// Unix seconds.
        package var start: Double
        /// Seconds over which the fleet adopts; 0 = everyone at `start`.
        package var duration: Double
        package var halted: Bool

        package init(start: Double, duration: Double, halted: Bool = false) {
            self.start = start
            self.duration = duration
            self.halted = halted
        }
    }

    /// Names the release; with the device id it picks the device's place, so each release picks
    /// a different first group. nil: the table's own fingerprint stands in.
    package var release: String?
    package var requiresNative: NativeVersion?
    package var rollout: Rollout?

    package init(release: String? = nil, requiresNative: NativeVersion? = nil, rollout: Rollout? = nil) {
        self.release = release
        self.requiresNative = requiresNative
        self.rollout = rollout
    }

    /// A manifest that does not parse is refused whole, like a bad table (exit 4).
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> ReleaseManifest {
        let json = try JSONValue.parse(bytes, source: source)
        guard case .object = json else { throw .integrity("release manifest \(source) is not a JSON object") }
        var manifest = ReleaseManifest()
        if let value = json["release"], value != .null {
            guard let name = value.string, !name.isEmpty, name.utf8.count <= 256 else {
                throw .integrity("release manifest \(source): \"release\" must be a non-empty string")
            }
            manifest.release = name
        }
        if let requires = json["requires"], let native = requires["native"], native != .null {
            guard let text = native.string else { throw .integrity("release manifest \(source): requires.native must be a string like \"2.3.0\"") }
            do { manifest.requiresNative = try NativeVersion(text) } catch {
                throw .integrity("release manifest \(source): requires.native: \(error.message)")
            }
        }
        if let rollout = json["rollout"], rollout != .null {
            let start = rollout["start"]?.double ?? 0
            let duration = rollout["duration"]?.double ?? 0
            let halted: Bool
            switch rollout["halted"] {
            case nil, .null?: halted = false
            case .bool(let value)?: halted = value
            default: throw .integrity("release manifest \(source): rollout.halted must be true or false")
            }
            guard start.isFinite, duration.isFinite, start >= 0, duration >= 0 else {
                throw .integrity("release manifest \(source): rollout.start and rollout.duration must be non-negative numbers of seconds")
            }
            manifest.rollout = Rollout(start: start, duration: duration, halted: halted)
        }
        return manifest
    }

    /// The manifest `routes` writes: keys sorted, one line.
    package func serialized() -> [UInt8] {
        var parts: [String] = []
        if let release { parts.append("\"release\": \(JSONText.quoted(release))") }
        if let requiresNative { parts.append("\"requires\": {\"native\": \(JSONText.quoted(requiresNative.description))}") }
        if let rollout {
            parts.append("\"rollout\": {\"duration\": \(Self.number(rollout.duration)), \"halted\": \(rollout.halted), \"start\": \(Self.number(rollout.start))}")
        }
        return Array(("{" + parts.joined(separator: ", ") + "}\n").utf8)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
