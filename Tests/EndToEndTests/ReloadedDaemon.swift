import Foundation
import TestOrigin

/// A daemon configured by a file that a test rewrites and reloads with SIGHUP, counting the
/// syncs the origin sees: each reload's sync is the one after the count moves.
struct ReloadedDaemon {
    let daemon: DaemonProcess
    let origin: TestOrigin
    let dir: Scratch

    /// Started on `config.json` naming `origin` alone; returns once it serves and has synced once.
    init(origin: TestOrigin, dir: Scratch, environment: [String: String]) throws {
        try dir.write("config.json", #"{"remote": "\#(origin.url)"}"#)
        daemon = try DaemonProcess(["--config", dir.path("config.json"), "--preset", dir.path("preset"), "--interval", "3600"],
                                   cache: dir.path("cache"), environment: environment)
        (self.origin, self.dir) = (origin, dir)
        _ = try daemon.waitUntilServing()
        try waitUntil(timeout: 20) { syncs >= 1 }
    }

    var syncs: Int { origin.requests.filter { $0.path == "Routes.json" }.count }

    /// `config` written and reloaded; returns once the sync the reload starts reached the origin.
    func reload(_ config: String) throws {
        let before = syncs
        try dir.write("config.json", config)
        daemon.process.signal(SIGHUP)
        try waitUntil(timeout: 20) { syncs > before }
    }
}
