import Logging
import ResourceCache
import RouteSync
import ServiceLifecycle

/// `serve --bundle-dir DIR` (repeatable): every two seconds the folders are scanned (BundleScan),
/// and a bundle found there that held still since the last scan is imported through the
/// coordinator, as `POST /_cenarius/import` would (docs/bundles.md): once per bundle, across
/// restarts (BundleTaken, in the cache). A poll, not inotify: a stick's mount appearing under a watched folder is a new
/// folder inside it, which inotify on the folder alone would not show for the files within.
struct BundleWatch: Service {
    let folders: [String]
    let coordinator: SyncCoordinator
    let logger: Logger
    static let interval: Duration = .seconds(2)
    /// Bundles remembered as done; past this the oldest are forgotten (a forged stream of them cannot grow memory).
    static let remembered = 1024

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var previous: [String: String] = [:]
            var done: [String] = []
            // Bundles whose import failed, by path: tried again once they are gone and back (a
            // stick pulled out mid-import and put back in, which may look the same to stat),
            // never in a loop while they stay.
            var failed: [String: String] = [:]
            var taken = BundleTaken(path: await coordinator.settings.cache.bundlesTaken)
            while !Task.isCancelled {
                let folders = folders
                let found = await onThread("cenariusd-bundles") { BundleScan.find(in: folders) }
                for (path, identity) in failed where !found.contains(where: { $0.path == path }) {
                    failed[path] = nil
                    done.removeAll { $0 == identity }
                }
                for bundle in found where previous[bundle.path] == bundle.identity && !done.contains(bundle.identity) {
                    done.append(bundle.identity)
                    if done.count > Self.remembered { done.removeFirst() }
                    let digest = BundleTaken.digest(of: bundle.path)
                    if let digest, taken.contains(digest) {
                        logger.info("bundle already imported", metadata: ["bundle": "\(bundle.path)"])
                        continue
                    }
                    logger.info("bundle found", metadata: ["bundle": "\(bundle.path)"])
                    switch await coordinator.runImport(bundle.path, reason: "bundle-dir") {
                    case .success(let report):
                        if let digest { taken.add(digest) }
                        logger.info("bundle imported", metadata: ["bundle": "\(bundle.path)", "outcome": "\(report.outcome.rawValue)",
                                                             "generation": "\(report.generation.map(String.init) ?? "-")"])
                    case .failure(let error):
                        failed[bundle.path] = bundle.identity
                        logger.error("bundle not imported", metadata: ["bundle": "\(bundle.path)", "error": "\(error.code.name)", "message": "\(error.message)"])
                    }
                }
                previous = Dictionary(found.map { ($0.path, $0.identity) }, uniquingKeysWith: { first, _ in first })
                try? await Task.sleep(for: Self.interval)
            }
        }
    }
}
