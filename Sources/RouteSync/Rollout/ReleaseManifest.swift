/// `<routes-name>.release` beside the table (G10): what a release requires of the host and how
/// fast the fleet adopts it. Every key is optional; unknown keys are ignored (forward compatible).
///
///     {"release": "2026.11-a", "requires": {"native": "2.3.0"},
///      "rollout": {"start": 1795400000, "duration": 86400, "halted": false}}
package struct ReleaseManifest: Sendable, Equatable {
    package struct Rollout: Sendable, Equatable {
        package var start: UnixTime
        /// Over which the fleet adopts; 0 = everyone at `start`.
        package var duration: Seconds
        package var halted: Bool

        package init(start: UnixTime, duration: Seconds, halted: Bool = false) {
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

    /// A manifest that does not parse, or whose known keys have the wrong type, shape or range,
    /// is refused whole, like a bad table (exit 4): guessing at `"start": "NOW"` or a start of
    /// 1e308 would adopt a release at a moment nobody chose. Unknown keys are ignored.
    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> ReleaseManifest {
        let json = try JSONValue.parse(bytes, source: source)
        guard case .object = json else { throw .integrity("release manifest \(source) is not a JSON object") }
        func refuse(_ why: String) -> CenariusError { .integrity("release manifest \(source): \(why)") }
        var manifest = ReleaseManifest()
        if let value = json["release"], value != .null {
            guard let name = value.string, !name.isEmpty, name.utf8.count <= 256 else {
                throw refuse("\"release\" must be a non-empty string of at most 256 bytes")
            }
            manifest.release = name
        }
        if let requires = json["requires"], requires != .null {
            guard case .object = requires else { throw refuse("\"requires\" must be an object like {\"native\": \"2.3.0\"}") }
            if let native = requires["native"], native != .null {
                guard let text = native.string else { throw refuse("requires.native must be a string like \"2.3.0\"") }
                do { manifest.requiresNative = try NativeVersion(text) } catch { throw refuse("requires.native: \(error.message)") }
            }
        }
        if let rollout = json["rollout"], rollout != .null {
            guard case .object = rollout else {
                throw refuse("\"rollout\" must be an object like {\"start\": 1795400000, \"duration\": 86400, \"halted\": false}")
            }
            let halted: Bool
            switch rollout["halted"] {
            case nil, .null?: halted = false
            case .bool(let value)?: halted = value
            default: throw refuse("rollout.halted must be true or false")
            }
            let start = try number(rollout["start"], "rollout.start", refuse) { UnixTime(exactly: $0) } ?? 0
            let duration = try number(rollout["duration"], "rollout.duration", refuse) { Seconds(exactly: $0) } ?? .zero
            manifest.rollout = Rollout(start: start, duration: duration, halted: halted)
        }
        return manifest
    }

    /// A number of seconds in the range `make` accepts; nil when the key is absent or null.
    private static func number<T>(_ value: JSONValue?, _ key: String, _ refuse: (String) -> CenariusError,
                                  _ make: (Double) -> T?) throws(CenariusError) -> T? {
        guard let value, value != .null else { return nil }
        guard case .number(let text) = value else { throw refuse("\(key) must be a number of seconds, not \(value.kind)") }
        guard let number = Double(text), let made = make(number) else {
            throw refuse("\(key) \(text.prefix(40)) is out of range (0 to \(Whole.text(Seconds.limit)) seconds)")
        }
        return made
    }

    /// The manifest `routes` writes: keys sorted, one line.
    package func serialized() -> [UInt8] {
        var parts: [String] = []
        if let release { parts.append("\"release\": \(JSONText.quoted(release))") }
        if let requiresNative { parts.append("\"requires\": {\"native\": \(JSONText.quoted(requiresNative.description))}") }
        if let rollout {
            parts.append("\"rollout\": {\"duration\": \(Whole.text(rollout.duration.value)), \"halted\": \(rollout.halted), \"start\": \(Whole.text(rollout.start.value))}")
        }
        return Array(("{" + parts.joined(separator: ", ") + "}\n").utf8)
    }
}
