import Synchronization

/// OpenTelemetry's samplers by their `OTEL_TRACES_SAMPLER` names: whether a trace is recorded,
/// decided once at its root (or taken from the caller's `traceparent` for the parent-based ones).
package struct Sampler: Sendable, Equatable {
    package enum Root: Sendable, Equatable {
        case always, never
        /// The share of traces kept, from the trace id's last 8 bytes as the specification's
        /// `TraceIdRatioBased` does, so every service that sees the trace decides alike.
        case ratio(Double)
    }

    package var root: Root
    /// Follow a remote parent's sampled flag (the `parentbased_` samplers, the default).
    package var parentBased: Bool

    package static let `default` = Sampler(root: .always, parentBased: true)

    /// `always_on`, `always_off`, `traceidratio`, and each with `parentbased_` before it; the
    /// ratio (0 to 1) from `argument` (`OTEL_TRACES_SAMPLER_ARG`, or after a colon: `traceidratio:0.1`).
    package init?(_ name: String, argument: String? = nil) {
        var text = Substring(name)
        var argument = argument
        if let colon = text.firstIndex(of: ":") {
            argument = String(text[text.index(after: colon)...])
            text = text[..<colon]
        }
        parentBased = text.hasPrefix("parentbased_")
        if parentBased { text = text.dropFirst("parentbased_".count) }
        switch text {
        case "always_on": root = .always
        case "always_off": root = .never
        case "traceidratio":
            guard let ratio = Double(argument ?? "1"), ratio >= 0, ratio <= 1 else { return nil }
            root = .ratio(ratio)
        default: return nil
        }
    }

    package init(root: Root, parentBased: Bool) {
        self.root = root
        self.parentBased = parentBased
    }

    func sampled(traceID: [UInt8], remoteParent: Bool?) -> Bool {
        if parentBased, let remoteParent { return remoteParent }
        switch root {
        case .always: return true
        case .never: return false
        case .ratio(let ratio):
            let value = traceID.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 1
            return Double(value) < ratio * Double(UInt64(1) << 63)
        }
    }
}

/// The sampler in force, shared by the tracer and what reconfigures it (a reload); nil: traces
/// are off.
final class SamplerSwitch: Sendable {
    private let value: Mutex<Sampler?>

    init(_ sampler: Sampler?) {
        value = Mutex(sampler)
    }

    var current: Sampler? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
