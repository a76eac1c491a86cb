package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// What staged adoption (G10) needs to know about this device.
package struct RolloutSettings: Sendable, Equatable {
    /// `--device-id`; nil: `/etc/machine-id`, else a random id kept in the cache.
    package var deviceID: String?
    /// `--native-version`: the host version a manifest's `requires.native` is compared with.
    package var nativeVersion: NativeVersion?
    /// Test hook (`CENARIUS_CLOCK_OFFSET`, seconds): shifts the clock rollout decisions use, so a
    /// test or a simulation can stand at any moment of a rollout. Never set it on a device.
    package var clockOffset: Double = 0

    package init(deviceID: String? = nil, nativeVersion: NativeVersion? = nil, clockOffset: Double = 0) {
        self.deviceID = deviceID
        self.nativeVersion = nativeVersion
        self.clockOffset = clockOffset
    }

    package func now() -> Double { FileSystem.now() + clockOffset }

    /// The device's identity: the flag, the machine's id, or one made up once and kept.
    package func device(layout: CacheLayout) -> RolloutGate.Device {
        RolloutGate.Device(id: deviceID ?? Self.machineID() ?? Self.keptID(layout), native: nativeVersion)
    }

    static func machineID() -> String? {
        guard let bytes = try? FileSystem.readFile("/etc/machine-id", limit: 4096) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return text.isEmpty ? nil : text
    }

    static func keptID(_ layout: CacheLayout) -> String {
        let path = layout.deviceID
        if let bytes = try? FileSystem.readFile(path, limit: 4096) {
            let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
            if !text.isEmpty { return text }
        }
        var id = ""
        for _ in 0..<16 {
            let byte = UInt8.random(in: 0...255)
            id += (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }
        try? FileSystem.makeDirectories(layout.root)
        try? FileSystem.writeAtomically(Array((id + "\n").utf8), to: path)
        return id
    }
}
