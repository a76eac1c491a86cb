import Foundation
import Testing
import TestOrigin

/// A publisher's side of a test: its folder (keys, build folders) and the in-process origin it
/// uploads to. `routes` runs as a user types it; the upload is the origin's `put`.
struct Publisher {
    let origin: TestOrigin
    let dir: Scratch

    /// A new origin and folder, both gone when the test ends (`.awaitsCleanups`).
    static func make() async throws -> Publisher {
        let publisher = Publisher(origin: try await TestOrigin(), dir: try Scratch())
        Cleanups.add { await publisher.origin.shutdown(); publisher.dir.remove() }
        return publisher
    }

    /// Writes `app.js` into the build folder `build` (unless nil), runs `routes` there with
    /// `options` (`@NAME` stands for the file NAME in the publisher's folder: `@k1.key`) and puts
    /// the result on the origin; a sidecar this run did not write is taken off it.
    @discardableResult
    func publish(_ app: String?, build: String = "site", _ options: [String]) throws -> Binary.Run {
        if let app { try dir.write(build + "/app.js", app) }
        let run = try Binary.run(["routes", dir.path(build)] + options.map { $0.hasPrefix("@") ? dir.path(String($0.dropFirst())) : $0 })
        #expect(run.status == 0, "\(run.stderr)")
        for name in ["app.js", "Routes.json", "Routes.json.sig", "Routes.json.release"] {
            if let text = dir.read(build + "/" + name) { origin.put(name, text) } else { origin.remove(name) }
        }
        return run
    }
}

extension Scratch {
    /// `keygen --output NAME` (and `extra`: `--rotate-from …`): NAME.key and NAME.pub in the folder.
    func keygen(_ name: String, _ extra: [String] = []) throws {
        let run = try Binary.run(["keygen", "--output", path(name)] + extra)
        #expect(run.status == 0, "\(run.stderr)")
    }
}
