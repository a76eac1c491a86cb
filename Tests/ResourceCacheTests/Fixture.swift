import Foundation
import Testing
import ResourceCache
import RouteSync
import Transport
import TestOrigin

/// A fresh cache and preset folder next to an in-process origin, per test.
struct Fixture {
    let origin: TestOrigin
    let root: String
    var settings: SyncSettings

    init(preset: [String: String] = [:]) async throws {
        origin = try await TestOrigin()
        root = NSTemporaryDirectory() + "cenarius-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root + "/preset", withIntermediateDirectories: true)
        settings = SyncSettings(
            remote: try Remote(origin.url),
            cache: CacheLayout(root: root + "/cache"),
            preset: Preset(root: root + "/preset"))
        settings.transfer.backoffBase = 0.01
        settings.transfer.timeout = 5
        settings.minRefetch = 0
        if !preset.isEmpty { try writePreset(preset) }
    }

    /// A fixture whose cleanup runs when the test ends (`.awaitsCleanups`).
    static func registered(preset: [String: String] = [:]) async throws -> Fixture {
        let f = try await Fixture(preset: preset)
        Cleanups.add { await f.cleanup() }
        return f
    }

    /// The origin goes down for good: it stops, and the remote becomes a port nothing listens
    /// on (port 1), since another test's origin may be given the stopped one's port at once.
    mutating func takeOriginDown() async throws {
        await origin.shutdown()
        settings.remote = try Remote("http://127.0.0.1:1")
    }

    /// The origin publishes `files` and a sync takes them.
    @discardableResult
    func release(_ files: [String: String]) throws(CenariusError) -> SyncReport {
        origin.publish(files)
        return try sync()
    }

    /// Writes files and a matching Routes.json into the preset folder.
    func writePreset(_ files: [String: String], table: [String: String]? = nil) throws {
        var lines: [String] = []
        for (uri, content) in files {
            let path = root + "/preset/" + uri
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        }
        for (uri, content) in table ?? files {
            lines.append("{\"uri\": \"\(uri)\", \"hash\": \"\(TestOrigin.md5(Array(content.utf8)))\"}")
        }
        try Data(("[" + lines.joined(separator: ",") + "]").utf8).write(to: URL(fileURLWithPath: root + "/preset/Routes.json"))
    }

    var syncer: Syncer { Syncer(settings: settings) }
    var resolver: Resolver { Resolver(settings: settings) }

    func sync() throws(CenariusError) -> SyncReport { try syncer.sync() }

    func resolve(_ uri: String, offline: Bool = false, strict: Bool = false) throws(CenariusError) -> Resolution {
        try resolver.resolve(uri, options: .init(offline: offline, strict: strict))
    }

    func content(_ resolution: Resolution) -> String {
        (try? String(contentsOfFile: resolution.path, encoding: .utf8)) ?? "<unreadable>"
    }

    func cleanup() async {
        await origin.shutdown()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// File requests (everything but the table) seen by the origin.
    /// Requests for the files of the table: the table and its sidecars (signature, release manifest,
    /// the release index a new table's downloads ask for: docs/release-bytes.md) left out.
    /// Requests for anything but the table (itself or compressed) and the release index.
    var fileRequests: [String] {
        origin.requests.map(\.path).filter {
            !$0.hasPrefix("Routes.json") && !$0.hasPrefix("_cenarius/Routes.json") && !$0.hasPrefix("_cenarius/index/") && $0 != "Routes.head"
        }
    }
}

/// The error `body` throws when it has `code`. Anything else — no error, another code, another type — is
/// recorded as a failure of the calling test and gives nil, so a check on the result can never pass by accident.
func expectError(
    _ code: CenariusError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> CenariusError? {
    do {
        try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CenariusError {
        if error.code == code { return error }
        Issue.record("expected \(code), got \(error.code): \(error.message)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
