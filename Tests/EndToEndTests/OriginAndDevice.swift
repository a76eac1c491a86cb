import TestOrigin

/// What most end-to-end tests start from: an in-process origin and a device's folder beside it,
/// both gone when the test ends (`.awaitsCleanups`), and the device's `--remote`, `--cache` and
/// `--preset` for every command run on it.
enum OriginAndDevice {
    static func make() async throws -> (origin: TestOrigin, dir: Scratch, common: [String]) {
        let origin = try await TestOrigin()
        let dir = try Scratch()
        Cleanups.add { await origin.shutdown(); dir.remove() }
        return (origin, dir, ["--remote", origin.url] + Device(in: dir).flags)
    }
}
